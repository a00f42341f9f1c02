/**
 * The recall set: 10 users × 5 conversations, written for this repo. Each user
 * says facts in early conversations (some changed in a later one: a move, a new
 * job), with small talk between; then 5 questions each (50 in all) whose answer
 * was said in an earlier conversation. A question names the message that holds
 * its answer, and for changed facts the old and the new value.
 */

export interface RecallUser {
  userId: string;
  /** Conversations in order, each a list of the user's messages. */
  conversations: string[][];
  questions: RecallQuestion[];
}

export interface RecallQuestion {
  question: string;
  /** The user's message that holds the answer (recall should bring it into the top 5). */
  answerIn: string;
  /** For a changed fact: the statement that holds now, and the one it replaced. */
  changed?: { now: string; before: string };
}

const NAMES = ["Ada", "Bruno", "Chiara", "Dmitri", "Esme", "Farid", "Greta", "Hiro", "Ines", "Jonas"];
const CITIES = ["Lisbon", "Oslo", "Porto", "Krakow", "Bergen", "Ghent", "Turin", "Malmo", "Leeds", "Graz", "Split", "Tartu"];
const EMPLOYERS = ["Babbage Labs", "Orbit Foods", "Kestrel Bank", "Nimbus Air", "Quill Press", "Tidal Power", "Vesta Clinic", "Zephyr Games"];
const BOOKS = ["Dune", "Emma", "Beloved", "Solaris", "Middlemarch", "Rebecca", "Kindred", "Ubik", "Persuasion", "Neuromancer"];
const PETS = ["Biscuit", "Pepper", "Miso", "Juniper", "Waffles", "Clementine", "Noodle", "Saffron", "Pickle", "Marble"];
const HOBBIES = ["bouldering", "pottery", "birdwatching", "sailing", "chess", "beekeeping", "calligraphy", "orienteering", "woodturning", "salsa"];
const FILLER = [
  "The weather was grey and windy all week.",
  "I watched a documentary about deep sea creatures last night.",
  "Remind me to call the plumber about the kitchen tap.",
  "Traffic on the ring road was terrible this morning.",
  "We tried a new ramen place near the station.",
  "My phone battery keeps dying before lunch.",
];

const pick = <T>(list: readonly T[], i: number): T => list[i % list.length] as T;

/** The set, the same on every run. */
export function recallSet(): RecallUser[] {
  return NAMES.map((name, u) => {
    const city = pick(CITIES, u);
    const newCity = pick(CITIES, u + 5);
    const job = pick(EMPLOYERS, u);
    const newJob = pick(EMPLOYERS, u + 3);
    const book = pick(BOOKS, u);
    const pet = pick(PETS, u);
    const hobby = pick(HOBBIES, u);
    const moves = u % 2 === 0; // half the users move, the other half change jobs
    const says = {
      name: `My name is ${name}.`,
      city: `${name} lives in ${city}.`,
      job: `${name} works at ${job}.`,
      book: `My favourite book is ${book}, I reread it every winter.`,
      pet: `Our cat is called ${pet} and she sleeps on the piano.`,
      hobby: `On Saturdays I go ${hobby} with my cousin.`,
      move: `${name} moved to ${newCity} last month.`,
      newJob: `${name} works at ${newJob} since Monday.`,
    };
    const conversations = [
      [says.name, says.city, pick(FILLER, u)],
      [says.job, pick(FILLER, u + 1), says.pet],
      [says.book, pick(FILLER, u + 2)],
      [says.hobby, pick(FILLER, u + 3)],
      [moves ? says.move : says.newJob, pick(FILLER, u + 4)],
    ];
    const questions: RecallQuestion[] = [
      { question: "What is my cat called?", answerIn: says.pet },
      { question: "Which book do I reread every winter?", answerIn: says.book },
      { question: "What do I do on Saturdays with my cousin?", answerIn: says.hobby },
      moves
        ? { question: `Where does ${name} live now?`, answerIn: says.move, changed: { now: `${name} lives in ${newCity}`, before: `${name} lives in ${city}` } }
        : {
            question: `Where does ${name} work now?`,
            answerIn: says.newJob,
            changed: { now: `${name} works at ${newJob}`, before: `${name} works at ${job}` },
          },
      { question: `Where did ${name} live before?`, answerIn: says.city },
    ];
    return { userId: `user-${u + 1}`, conversations, questions };
  });
}
