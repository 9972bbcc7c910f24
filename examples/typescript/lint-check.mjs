// Compares the warnings of Redocly and Spectral (their JSON reports, paths
// in argv) with lint-warnings.txt and prints each with its reason. Exits 1
// when a warning is not listed or a listed one is no longer printed.
import { readFileSync } from "node:fs";

const [redoclyFile, spectralFile] = process.argv.slice(2);
const json = (file) => {
  const text = readFileSync(file, "utf8");
  return JSON.parse(text.slice(text.search(/[[{]/)));
};
const pointer = (path) => "#/" + path.map((p) => String(p).replaceAll("~", "~0").replaceAll("/", "~1")).join("/");

const seen = new Map(); // "tool rule pointer" -> message
for (const p of json(redoclyFile).problems) {
  if (p.severity === "warn") seen.set(`redocly ${p.ruleId} ${p.location[0].pointer}`, p.message);
}
for (const r of json(spectralFile)) {
  if (r.severity === 1) seen.set(`spectral ${r.code} ${pointer(r.path)}`, r.message);
}

// The listed warnings, each with the comment paragraph above it; a blank
// line ends a paragraph.
const listed = new Map();
let why = [];
for (const line of readFileSync(new URL("./lint-warnings.txt", import.meta.url), "utf8").split("\n")) {
  if (line.trim() === "") why = [];
  else if (line.startsWith("#")) why.push(line.replace(/^# ?/, ""));
  else listed.set(line.trim(), why.join(" "));
}

let bad = 0;
for (const [key, message] of seen) {
  if (listed.has(key)) {
    console.log(`warning (listed) ${key}\n  ${message}\n  why it stays: ${listed.get(key)}`);
  } else {
    console.error(`warning NOT in lint-warnings.txt: ${key}\n  ${message}`);
    bad++;
  }
}
for (const key of listed.keys()) {
  if (!seen.has(key)) {
    console.error(`lint-warnings.txt lists a warning no linter prints any more: ${key}`);
    bad++;
  }
}
console.log(`${seen.size} lint warnings, ${listed.size} listed with their reasons`);
process.exit(bad ? 1 : 0);
