/**
 * The held-out recall set: long two-person chats made by a generator of their own,
 * with other people, other topics, other words and another register (texting) than
 * the tuning set (`recall-conversations.ts`), for reporting only. Nothing in
 * memoria's ranking or lexicon is chosen on it: a parameter tried against these
 * figures must be chosen on the tuning set and then reported here, as it stands.
 * The questions are labelled with the turns that answer them, as there.
 */
import type { SetConversation, SetTurn } from "./recall-conversations.js";
import type { QuestionKind } from "./recall-events.js";

const PAIRS: [string, string][] = [
  ["Rosa", "Idris"],
  ["Kenji", "Aline"],
  ["Farah", "Oskar"],
  ["Bea", "Luca"],
  ["Nia", "Teodor"],
  ["Wren", "Malik"],
  ["Iris", "Dmitri"],
  ["Zara", "Felix"],
  ["Ines", "Rahul"],
  ["Olu", "Greta"],
];

const W = {
  cars: ["Skoda Octavia", "Fiat Panda", "Volvo estate", "Mazda hatchback", "Toyota Yaris", "Renault Clio"],
  paint: ["silver", "dark blue", "white", "bright orange", "grey"],
  allergens: ["peanuts", "shellfish", "cats", "pollen", "penicillin", "sesame"],
  languages: ["Portuguese", "Japanese", "Welsh", "Turkish", "Dutch", "Korean"],
  tutors: ["Senhora Costa", "Hiro", "Gwen", "Mehmet", "Joost", "Min-ji"],
  crops: ["tomatoes", "courgettes", "chillies", "strawberries", "runner beans", "basil"],
  plots: ["an allotment by the canal", "the balcony", "a raised bed behind the flats", "the community garden"],
  sports: ["five-a-side football", "netball", "water polo", "ultimate frisbee", "rugby sevens", "volleyball"],
  teams: ["the Red Kites", "Canal Street Rovers", "the Otters", "Northside Nomads", "the Comets"],
  charities: ["the food bank", "the animal shelter", "a homeless kitchen", "the hospice shop", "a literacy charity"],
  districts: ["Brixton", "Kreuzberg", "Vesterbro", "Gracia", "Ostiense", "Vila Madalena", "Le Plateau"],
  relatives: ["sister", "cousin", "brother", "aunt"],
  relNames: ["Sofia", "Ibrahim", "Claire", "Mateo", "Yara", "Piotr", "Hana", "Kwame"],
  trades: ["paramedic", "tattoo artist", "air traffic controller", "dentist", "florist", "pilot", "locksmith"],
  countries: ["Iceland", "Vietnam", "Morocco", "Peru", "Georgia", "New Zealand"],
  gifts: ["a record player", "a weekend spa voucher", "a vintage watch", "a telescope", "a pasta machine"],
  partners: ["my boyfriend", "my girlfriend", "my wife", "my husband"],
  firms: ["a solar start-up", "the city council", "a vet surgery", "a bike shop", "a games studio", "a hotel chain"],
  jobs: ["receptionist", "sales rep", "mechanic", "events planner", "translator", "barber"],
  months: ["March", "May", "July", "September", "October", "December"],
};

const SMALL_TALK = [
  "lol same",
  "omg {you} stop",
  "ugh mondays man",
  "did u watch the match last night?",
  "my wifi is being so slow today",
  "brb grabbing coffee",
  "ok ok fair enough",
  "haha classic {you}",
  "tbh i just want to sleep all weekend",
  "the bus was late AGAIN",
  "i ordered way too much takeaway",
  "anyway what's new with u",
  "no way! tell me more",
  "that's wild",
  "i can't believe it's nearly the weekend",
  "my landlord still hasn't fixed the boiler",
  "seen any good shows lately?",
  "i think i'm getting a cold",
  "u around later?",
  "sending good vibes {you}",
];
const OPENERS = ["yo {you}!", "hiya {you} 👋", "{you}!! u free?", "morning {you}", "heyyy {you}"];
const SIGN_OFFS = ["ok gtg, later {you}", "night {you} x", "ttyl {you}", "cya {you}!", "laters"];

/** xorshift32, seeded: the same set on every run, and no state shared with the tuning set's generator. */
function seeded(seed: number): () => number {
  let x = seed | 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
}

interface Said {
  turns: { by: "self" | "friend"; text: string; evidence?: string }[];
  questions: { kind: QuestionKind; question: string; evidence: string[] }[];
}

interface Person {
  name: string;
  done: Set<string>;
  home?: { district: string; label: string };
  job?: { firm: string; label: string };
  relative?: { kin: string; name: string; label: string };
  next: (what: string) => string;
}

type Topic = (who: Person, pick: <T>(list: readonly T[]) => T) => Said | undefined;

/** True the first time `who` meets `what` (and notes it): a topic said once, or once per value. */
function once(who: Person, what: string): boolean {
  if (who.done.has(what)) return false;
  who.done.add(what);
  return true;
}

const TOPICS: Topic[] = [
  (who, pick) => {
    if (!once(who, "car")) return undefined;
    const [car, paint, l] = [pick(W.cars), pick(W.paint), who.next("car")];
    return {
      turns: [
        { by: "self", text: `finally got wheels!! a ${paint} ${car}, second hand but runs great`, evidence: l },
        { by: "friend", text: "road trip!!! when do we go" },
      ],
      questions: [
        { kind: "single-hop", question: `What car did ${who.name} buy?`, evidence: [l] },
        { kind: "paraphrase", question: `What does ${who.name} drive these days?`, evidence: [l] },
      ],
    };
  },
  (who, pick) => {
    if (!once(who, "allergy")) return undefined;
    const [thing, l] = [pick(W.allergens), who.next("allergy")];
    return {
      turns: [
        { by: "self", text: `doctor ran the tests, turns out i react badly to ${thing}. explains a lot tbh`, evidence: l },
        { by: "friend", text: "omg glad u found out, that must have been scary" },
      ],
      questions: [
        { kind: "single-hop", question: `What is ${who.name} allergic to?`, evidence: [l] },
        { kind: "paraphrase", question: `Which thing did the tests show ${who.name} must avoid?`, evidence: [l] },
      ],
    };
  },
  (who, pick) => {
    if (!once(who, "language")) return undefined;
    const i = pick([0, 1, 2, 3, 4, 5]);
    const [lang, tutor, l] = [W.languages[i] as string, W.tutors[i] as string, who.next("language")];
    return {
      turns: [
        { by: "self", text: `started ${lang} lessons online, my tutor ${tutor} is so patient with me`, evidence: l },
        { by: "friend", text: "say something!! 😂" },
        { by: "self", text: "absolutely not, i can barely order a coffee yet" },
      ],
      questions: [
        { kind: "single-hop", question: `Which language is ${who.name} learning?`, evidence: [l] },
        { kind: "paraphrase", question: `Who teaches ${who.name} online?`, evidence: [l] },
        { kind: "temporal", question: `When did ${who.name} start the ${lang} lessons?`, evidence: [l] },
      ],
    };
  },
  (who, pick) => {
    const [crop, plot, l] = [pick(W.crops), pick(W.plots), who.next("garden")];
    if (!once(who, `garden:${crop}`)) return undefined;
    return {
      turns: [
        { by: "self", text: `put some ${crop} in on ${plot} this weekend, fingers crossed nothing eats them`, evidence: l },
        { by: "friend", text: "green fingers!! save me some" },
      ],
      questions: [{ kind: "single-hop", question: `What did ${who.name} plant on ${plot}?`, evidence: [l] }],
    };
  },
  (who, pick) => {
    if (!once(who, "sport")) return undefined;
    const [sport, team, l] = [pick(W.sports), pick(W.teams), who.next("sport")];
    return {
      turns: [
        { by: "self", text: `signed up for a ${sport} league, the team's called ${team} lol`, evidence: l },
        { by: "friend", text: "u?? sport?? who are u" },
      ],
      questions: [
        { kind: "single-hop", question: `Which team did ${who.name} sign up with?`, evidence: [l] },
        { kind: "paraphrase", question: `What does ${who.name} play in the league?`, evidence: [l] },
      ],
    };
  },
  (who, pick) => {
    if (!once(who, "charity")) return undefined;
    const [place, l] = [pick(W.charities), who.next("charity")];
    return {
      turns: [
        { by: "self", text: `been helping out at ${place} on sundays, honestly the best part of my week`, evidence: l },
        { by: "friend", text: "that's lovely, proud of u" },
      ],
      questions: [
        { kind: "single-hop", question: `Where does ${who.name} help out on Sundays?`, evidence: [l] },
        { kind: "paraphrase", question: `Where does ${who.name} give time for free?`, evidence: [l] },
      ],
    };
  },
  (who, pick) => {
    const district = pick(W.districts);
    if (who.home?.district === district || who.done.has("moved twice")) return undefined;
    const l = who.next("home");
    const before = who.home;
    who.home = { district, label: l };
    if (before) who.done.add("moved twice");
    return {
      turns: [
        {
          by: "self",
          text: before ? `plot twist, we're leaving ${before.district}. new place is in ${district}!` : `got the keys to a flat in ${district} today 🔑`,
          evidence: l,
        },
        { by: "friend", text: "housewarming when??" },
      ],
      questions: before
        ? [{ kind: "changed", question: `Which neighbourhood does ${who.name} live in now?`, evidence: [l] }]
        : [{ kind: "single-hop", question: `Where did ${who.name} get a flat?`, evidence: [l] }],
    };
  },
  (who, pick) => {
    const firm = pick(W.firms);
    if (who.job?.firm === firm || who.done.has("second job")) return undefined;
    const [job, l] = [pick(W.jobs), who.next("job")];
    const before = who.job;
    who.job = { firm, label: l };
    if (before) who.done.add("second job");
    return {
      turns: [
        {
          by: "self",
          text: before ? `handed in my notice at ${before.firm}, starting as a ${job} at ${firm} next month` : `new gig! i'm a ${job} at ${firm} now`,
          evidence: l,
        },
        { by: "friend", text: "congrats!!! drinks on u" },
      ],
      questions: before
        ? [{ kind: "changed", question: `Where does ${who.name} work now?`, evidence: [l] }]
        : [{ kind: "single-hop", question: `What job did ${who.name} get?`, evidence: [l] }],
    };
  },
  (who, pick) => {
    if (who.relative) {
      if (!once(who, "relative job")) return undefined;
      const [trade, l] = [pick(W.trades), who.next("relative job")];
      return {
        turns: [
          { by: "self", text: `${who.relative.name} passed the final exam, they're officially a ${trade}!!`, evidence: l },
          { by: "friend", text: `tell ${who.relative.name} congrats from me` },
        ],
        questions: [{ kind: "multi-hop", question: `What does ${who.name}'s ${who.relative.kin} do for a living?`, evidence: [who.relative.label, l] }],
      };
    }
    const [kin, name, l] = [pick(W.relatives), pick(W.relNames), who.next("relative")];
    who.relative = { kin, name, label: l };
    return {
      turns: [
        { by: "self", text: `my ${kin} ${name} is crashing at mine for a bit while they train`, evidence: l },
        { by: "friend", text: "aw cosy, hope they do the dishes" },
      ],
      questions: [{ kind: "single-hop", question: `What is the name of ${who.name}'s ${kin}?`, evidence: [l] }],
    };
  },
  (who, pick) => {
    if (!once(who, "trip")) return undefined;
    const [country, month, l] = [pick(W.countries), pick(W.months), who.next("trip")];
    return {
      turns: [
        { by: "self", text: `booked flights!! ${country} in ${month}, can't wait`, evidence: l },
        { by: "friend", text: "jealous. bring me back something" },
      ],
      questions: [
        { kind: "temporal", question: `When is ${who.name} travelling to ${country}?`, evidence: [l] },
        { kind: "single-hop", question: `Which country is ${who.name} flying to?`, evidence: [l] },
      ],
    };
  },
  (who, pick) => {
    if (!once(who, "gift")) return undefined;
    const [gift, partner, l] = [pick(W.gifts), pick(W.partners), who.next("gift")];
    return {
      turns: [
        { by: "self", text: `got ${partner} ${gift} for their birthday, hope they like it`, evidence: l },
        { by: "friend", text: "they'll love it, good call" },
      ],
      questions: [{ kind: "paraphrase", question: `What present did ${who.name} choose for the birthday?`, evidence: [l] }],
    };
  },
];

/** `conversations` chats of `sessions` sessions each. */
export function heldOutConversations(conversations = 10, sessions = 24): SetConversation[] {
  return Array.from({ length: conversations }, (_, c) => {
    const random = seeded(0x0ddba11 + 7919 * c);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
    const [nameA, nameB] = PAIRS[c % PAIRS.length] as [string, string];
    const labels = new Map<string, [number, number]>();
    let said = 0;
    const person = (name: string, side: string): Person => ({ name, done: new Set(), next: (what) => `${side}:${what}:${said++}` });
    const people = { A: person(nameA, "A"), B: person(nameB, "B") };
    const out: SetConversation = { id: `held-${c + 1}`, names: { A: nameA, B: nameB }, sessions: [], questions: [] };
    let day = Date.UTC(2024, 2, 3 + c * 2, 18);
    for (let s = 0; s < sessions; s++) {
      day += (3 + Math.floor(random() * 12)) * 86_400_000;
      const turns: SetTurn[] = [];
      const say = (speaker: "A" | "B", text: string, label?: string) => {
        if (label) labels.set(label, [s, turns.length]);
        turns.push({ speaker, text });
      };
      const other = (speaker: "A" | "B") => (speaker === "A" ? "B" : "A");
      const chat = (speaker: "A" | "B", lines: readonly string[]) => say(speaker, pick(lines).replaceAll("{you}", out.names[other(speaker)]));
      chat("A", OPENERS);
      chat("B", SMALL_TALK);
      const speakers: ("A" | "B")[] = random() < 0.5 ? ["A", "B"] : ["B", "A", "B"];
      for (const speaker of speakers) {
        let topic: Said | undefined;
        for (let tries = 0; !topic && tries < 10; tries++) topic = pick(TOPICS)(people[speaker], pick);
        if (topic) {
          for (const turn of topic.turns) say(turn.by === "self" ? speaker : other(speaker), turn.text, turn.evidence);
          for (const q of topic.questions)
            out.questions.push({ kind: q.kind, question: q.question, evidence: q.evidence.map((label) => labels.get(label) as [number, number]) });
        }
        for (let n = 0; n < 2 + Math.floor(random() * 5); n++) chat(n % 2 === 0 ? other(speaker) : speaker, SMALL_TALK);
      }
      chat("B", SIGN_OFFS);
      out.sessions.push({ at: day, turns });
    }
    return out;
  });
}
