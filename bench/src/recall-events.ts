/**
 * The life events of the recall-quality conversations (recall-conversations.ts):
 * what a speaker says, how the friend answers, and the questions asked about it
 * later, with the turns that hold each answer. Questions are phrased the way a
 * person asks them weeks later: some share a word with the answer, some none (a
 * synonym, the speaker's name instead of "I"), some need two turns.
 */

/** The kinds of question, reported apart. */
export type QuestionKind = "single-hop" | "paraphrase" | "temporal" | "changed" | "multi-hop";

/** A pick from a list, driven by the conversation's seeded generator. */
export type Pick = <T>(list: readonly T[]) => T;

/** A turn of an event, by the speaker (`self`) or the friend; `evidence` marks the turns that answer its questions, by label. */
export interface EventTurn {
  by: "self" | "friend";
  text: string;
  evidence?: string;
}

export interface EventQuestion {
  kind: QuestionKind;
  question: string;
  /** Labels of the turns (this event's or an earlier one's) that hold the answer. */
  evidence: string[];
}

export interface LifeEvent {
  turns: EventTurn[];
  questions: EventQuestion[];
}

/** What a speaker has said so far, so later events can refer back (a job changed, a friend met). */
export interface Life {
  name: string;
  /** Labels are unique per conversation: `${prefix}:${n}`. */
  label: (what: string) => string;
  job?: { company: string; role: string; said: string };
  home?: { area: string; said: string };
  friend?: { name: string; hobby: string; said: string };
  done: Set<string>;
}

export const V = {
  breeds: ["greyhound", "beagle", "spaniel", "terrier", "collie", "labrador", "dachshund", "whippet"],
  petNames: ["Pretzel", "Juniper", "Waffles", "Biscuit", "Clementine", "Noodle", "Saffron", "Marble", "Tofu", "Pickle", "Ziggy", "Hazel"],
  companies: [
    "Kestrel Bank",
    "Orbit Foods",
    "Babbage Labs",
    "Nimbus Air",
    "Quill Press",
    "Tidal Power",
    "Vesta Clinic",
    "Zephyr Games",
    "Lumen Studio",
    "Harbor Logistics",
  ],
  roles: ["data analyst", "nurse", "product designer", "sous chef", "civil engineer", "copywriter", "lab technician", "project manager"],
  cities: ["Lisbon", "Oslo", "Porto", "Krakow", "Bergen", "Ghent", "Turin", "Malmo", "Leeds", "Graz", "Split", "Tartu", "Seville", "Bruges", "Lyon", "Trieste"],
  landmarks: ["the old lighthouse", "the castle ruins", "the glacier viewpoint", "the cathedral tower", "the waterfall trail", "the hilltop monastery"],
  hobbies: ["pottery", "salsa", "woodturning", "watercolour", "bouldering", "calligraphy", "improv", "beekeeping"],
  venues: ["community centre", "library annex", "arts college", "youth club", "climbing gym"],
  bands: ["The Lanterns", "Velvet Harbour", "Static Orchard", "Blue Meridian", "The Paper Kites", "Northern Echo"],
  degrees: ["marine biology", "architecture", "veterinary medicine", "economics", "linguistics", "astrophysics"],
  books: ["Middlemarch", "Solaris", "Kindred", "Beloved", "Rebecca", "Persuasion", "Neuromancer", "Ubik", "Dune", "Emma"],
  authors: ["George Eliot", "Stanislaw Lem", "Octavia Butler", "Toni Morrison", "Daphne du Maurier", "Jane Austen", "William Gibson", "Philip Dick"],
  dishes: ["a mushroom risotto", "lamb tagine", "a lemon tart", "seafood paella", "beef wellington", "vegetable lasagne"],
  distances: ["5k", "10k", "half marathon"] as const,
  areas: ["Riverside", "Old Town", "Hillcrest", "the harbour district", "Westfield", "Elm Park", "Northgate"],
  colors: ["red", "teal", "mustard yellow", "matte black", "olive green", "burgundy"],
  bikes: ["road", "cargo", "folding", "gravel"],
  orgs: ["St Anne's", "Eastside", "Greenway", "Hope Street"],
  instruments: ["cello", "ukulele", "saxophone", "piano", "banjo", "violin"],
  teachers: ["Mrs Okafor", "Mr Lindqvist", "Ms Romero", "Mr Haddad", "Mrs Novak"],
  friends: ["Lena", "Priya", "Marco", "Yusuf", "Ingrid", "Tomasz", "Aiko", "Dario"],
  weekdays: ["Saturday", "Sunday", "Friday", "Tuesday"],
};

type EventMaker = (life: Life, pick: Pick) => LifeEvent | undefined;

/** True the first time a life meets `what` (and notes it): events said once, or once per value. */
function once(life: Life, what: string): boolean {
  if (life.done.has(what)) return false;
  life.done.add(what);
  return true;
}

/** Each kind of event, once per life where it says so. */
export const EVENTS: EventMaker[] = [
  (life, pick) => {
    if (!once(life, "pet")) return undefined;
    const [breed, pet, day, s] = [pick(V.breeds), pick(V.petNames), pick(V.weekdays), life.label("pet")];
    return {
      turns: [
        {
          by: "self",
          text: pick([
            `Big news, we adopted a ${breed} puppy on ${day} and named him ${pet}!`,
            `So on ${day} we brought home a little ${breed} puppy. We named him ${pet}.`,
          ]),
          evidence: s,
        },
        { by: "friend", text: pick([`${pet}, what a great name! Puppies are a lot of work though.`, `Aww, I love ${breed}s. Send me pictures of ${pet}!`]) },
        { by: "self", text: "He already chewed one of my shoes, but he is worth it." },
      ],
      questions: [
        { kind: "single-hop", question: `What did ${life.name} name the puppy?`, evidence: [s] },
        { kind: "paraphrase", question: `What is ${life.name}'s dog called?`, evidence: [s] },
        { kind: "temporal", question: `When did ${life.name} adopt ${pet}?`, evidence: [s] },
      ],
    };
  },
  (life, pick) => {
    const [company, role, s] = [pick(V.companies), pick(V.roles), life.label("job")];
    const before = life.job;
    if (before && (before.company === company || life.done.has("job2"))) return undefined;
    const text = before
      ? pick([
          `I handed in my notice at ${before.company}. Starting Monday I am a ${role} at ${company}.`,
          `Finally left ${before.company}! I joined ${company} as a ${role} last week.`,
        ])
      : pick([`I got the job! I am going to be a ${role} at ${company}.`, `First week as a ${role} at ${company} is done, everyone there is lovely.`]);
    life.job = { company, role, said: s };
    if (before) life.done.add("job2");
    return {
      turns: [
        { by: "self", text, evidence: s },
        { by: "friend", text: pick(["Congratulations, that is huge!", `A ${role}, that suits you so well.`, "You deserve it after all that searching."]) },
      ],
      questions: before
        ? [
            { kind: "changed", question: `Where does ${life.name} work now?`, evidence: [s] },
            { kind: "single-hop", question: `Which company did ${life.name} leave?`, evidence: [s] },
          ]
        : [{ kind: "single-hop", question: `What is ${life.name}'s role at ${company}?`, evidence: [s] }],
    };
  },
  (life, pick) => {
    const [city, landmark, s] = [pick(V.cities), pick(V.landmarks), life.label("trip")];
    if (!once(life, `trip ${city}`)) return undefined;
    return {
      turns: [
        {
          by: "self",
          text: pick([
            `Just got back from ${city}. We hiked up to ${landmark} and the view was unreal.`,
            `The trip to ${city} was perfect, the best part was the walk to ${landmark}.`,
          ]),
          evidence: s,
        },
        { by: "friend", text: pick([`I have always wanted to see ${city}!`, "That sounds like the break you needed."]) },
      ],
      questions: [
        { kind: "single-hop", question: `Which place did ${life.name} hike to in ${city}?`, evidence: [s] },
        { kind: "temporal", question: `When did ${life.name} travel to ${city}?`, evidence: [s] },
      ],
    };
  },
  (life, pick) => {
    if (!once(life, "hobby")) return undefined;
    const [hobby, venue, friend, s, m] = [pick(V.hobbies), pick(V.venues), pick(V.friends), life.label("hobby"), life.label("met")];
    life.friend = { name: friend, hobby, said: m };
    return {
      turns: [
        { by: "self", text: `I signed up for a ${hobby} class at the ${venue}, Thursday evenings.`, evidence: s },
        { by: "friend", text: pick(["Ooh, you have to show me what you make.", "That is such a good way to switch off after work."]) },
        { by: "self", text: `There is a woman there called ${friend}, we clicked straight away.`, evidence: m },
      ],
      questions: [
        { kind: "paraphrase", question: `What new pastime did ${life.name} pick up?`, evidence: [s] },
        { kind: "single-hop", question: `Who did ${life.name} meet in the ${hobby} class?`, evidence: [m] },
      ],
    };
  },
  (life, pick) => {
    const friend = life.friend;
    if (!friend || !once(life, "gig")) return undefined;
    const [band, s] = [pick(V.bands), life.label("gig")];
    return {
      turns: [
        { by: "self", text: `${friend.name} and I saw ${band} live on Friday, we danced the whole night.`, evidence: s },
        { by: "friend", text: `I love ${band}! Was the crowd good?` },
      ],
      questions: [
        { kind: "multi-hop", question: `Which band did ${life.name} see with the friend from the ${friend.hobby} class?`, evidence: [friend.said, s] },
      ],
    };
  },
  (life, pick) => {
    if (!once(life, "sister")) return undefined;
    const [city, degree, s] = [pick(V.cities), pick(V.degrees), life.label("sister")];
    return {
      turns: [
        { by: "self", text: `My sister is moving to ${city} in September to start her ${degree} degree.`, evidence: s },
        { by: "friend", text: "You must be so proud of her. Will you visit?" },
      ],
      questions: [
        { kind: "paraphrase", question: `What is ${life.name}'s sister going to study?`, evidence: [s] },
        { kind: "single-hop", question: `Which city is ${life.name}'s sister moving to?`, evidence: [s] },
      ],
    };
  },
  (life, pick) => {
    const [book, author, s] = [pick(V.books), pick(V.authors), life.label("book")];
    if (!once(life, `book ${book}`)) return undefined;
    return {
      turns: [
        {
          by: "self",
          text: pick([`I am reading ${book} by ${author}, I could not put it down last night.`, `Finished ${book} by ${author} on the train, what an ending.`]),
          evidence: s,
        },
        { by: "friend", text: pick(["Add it to my list, I need something new.", `I tried ${book} once but never finished it.`]) },
      ],
      questions: [
        { kind: "single-hop", question: `Who wrote the book ${book} that ${life.name} was reading?`, evidence: [s] },
        { kind: "paraphrase", question: `Which novel did ${life.name} enjoy lately?`, evidence: [s] },
      ],
    };
  },
  (life, pick) => {
    const [distance, s] = [pick(V.distances), life.label("race")];
    const minutes = { "5k": 22, "10k": 48, "half marathon": 105 }[distance] + pick([0, 3, 7, 11, 16]);
    if (!once(life, `race ${distance}`)) return undefined;
    return {
      turns: [
        { by: "self", text: `I ran the ${distance} this morning and finished in ${minutes} minutes, a personal best.`, evidence: s },
        { by: "friend", text: "That is amazing, your training paid off!" },
      ],
      questions: [
        { kind: "single-hop", question: `How many minutes did ${life.name} take to finish the ${distance}?`, evidence: [s] },
        { kind: "temporal", question: `When did ${life.name} run the ${distance}?`, evidence: [s] },
      ],
    };
  },
  (life, pick) => {
    const [dish, s] = [pick(V.dishes), life.label("cook")];
    if (!once(life, "cook")) return undefined;
    return {
      turns: [
        { by: "self", text: `For my parents' anniversary I cooked ${dish}, and my mum asked for the recipe.`, evidence: s },
        { by: "friend", text: "You should open a restaurant honestly." },
      ],
      questions: [{ kind: "paraphrase", question: `What meal did ${life.name} prepare for the celebration?`, evidence: [s] }],
    };
  },
  (life, pick) => {
    const [area, s] = [pick(V.areas), life.label("home")];
    const before = life.home;
    if (before && (before.area === area || life.done.has("home2"))) return undefined;
    const text = before
      ? `We moved again, this time to a little house in ${area}. Goodbye ${before.area}!`
      : pick([`We finally got the keys to our flat in ${area}.`, `Moving day went fine, we are settled into the new place in ${area}.`]);
    life.home = { area, said: s };
    if (before) life.done.add("home2");
    return {
      turns: [
        { by: "self", text, evidence: s },
        { by: "friend", text: pick(["Housewarming party soon?", "Unpacking is the worst part, good luck!"]) },
      ],
      questions: before
        ? [{ kind: "changed", question: `Which neighbourhood does ${life.name} live in now?`, evidence: [s] }]
        : [{ kind: "single-hop", question: `Where is ${life.name}'s flat?`, evidence: [s] }],
    };
  },
  (life, pick) => {
    if (!once(life, "bike")) return undefined;
    const [color, bike, s] = [pick(V.colors), pick(V.bikes), life.label("bike")];
    return {
      turns: [
        { by: "self", text: `I bought a ${color} ${bike} bike so I can cycle to the office.`, evidence: s },
        { by: "friend", text: "Way better than the bus." },
      ],
      questions: [
        { kind: "single-hop", question: `What colour is ${life.name}'s bike?`, evidence: [s] },
        { kind: "paraphrase", question: `How does ${life.name} commute to work these days?`, evidence: [s] },
      ],
    };
  },
  (life, pick) => {
    const [org, day, s] = [pick(V.orgs), pick(V.weekdays), life.label("volunteer")];
    if (!once(life, "volunteer")) return undefined;
    return {
      turns: [
        { by: "self", text: `I volunteered at the ${org} food bank on ${day}, sorting donations for six hours.`, evidence: s },
        { by: "friend", text: "That is really kind of you." },
      ],
      questions: [
        { kind: "single-hop", question: `At which food bank did ${life.name} volunteer?`, evidence: [s] },
        { kind: "temporal", question: `When did ${life.name} help out sorting donations?`, evidence: [s] },
      ],
    };
  },
  (life, pick) => {
    if (!once(life, "music")) return undefined;
    const [instrument, teacher, s] = [pick(V.instruments), pick(V.teachers), life.label("music")];
    return {
      turns: [
        { by: "self", text: `I have started ${instrument} lessons, my teacher ${teacher} is very patient with me.`, evidence: s },
        { by: "friend", text: `I did not know you liked the ${instrument}!` },
      ],
      questions: [
        { kind: "single-hop", question: `Who teaches ${life.name} the ${instrument}?`, evidence: [s] },
        { kind: "paraphrase", question: `Which instrument is ${life.name} learning to play?`, evidence: [s] },
      ],
    };
  },
];
