// Regenerates the test data rendered by the reference Jinja renderer for chat templates,
// @huggingface/jinja 0.5.11 (what Hugging Face renders chat templates with in JavaScript):
//   tests/data/chat_templates_extra.json   the shipped templates (../shared/data/chat_templates)
//                                          on harder conversations than golden/chat_templates.json
//   tests/data/jinja_reference_cases.json  small templates, one construct each, with their output
//                                          or the fact that the reference raises
// The package is only run here, never linked or vendored:
//   npm install --prefix /tmp/jinja-ref @huggingface/jinja@0.5.11
//   node tests/data/render_chat_templates.mjs /tmp/jinja-ref [../shared]
// strftime_now sees 2026-11-30 00:00 local time, the date of the golden renderings.
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { CASES } from "./jinja_reference_cases.mjs";
import { CONVERSATIONS } from "./chat_conversations.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const refDir = process.argv[2];
const sharedDir = process.argv[3] ?? path.join(here, "..", "..", "..", "shared");
if (!refDir) {
  console.error("usage: node render_chat_templates.mjs JINJA_REF_PREFIX [SHARED_DIR]");
  process.exit(2);
}
const require = createRequire(path.join(path.resolve(refDir), "package.json"));
const packageJson = path.join(path.resolve(refDir), "node_modules", "@huggingface", "jinja", "package.json");
const version = JSON.parse(fs.readFileSync(packageJson, "utf8")).version;
if (version !== "0.5.11") throw new Error(`@huggingface/jinja ${version} installed, 0.5.11 wanted`);
const { Template } = require("@huggingface/jinja");

// Pin "now" for strftime_now (the reference reads the clock through new Date()).
const RealDate = Date;
globalThis.Date = class extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(2026, 10, 30);
    else super(...args);
  }
};

// The text, or the error; "raised" marks an error whose message the template wrote itself (a
// raise_exception), which the C++ renderer must report word for word.
function render(source, context) {
  try {
    return { text: new Template(source).render(context) };
  } catch (e) {
    const error = String(e.message);
    return error && source.includes(error) ? { error, raised: true } : { error };
  }
}

// The golden file's special tokens per template, so both files render alike.
const golden = JSON.parse(fs.readFileSync(path.join(sharedDir, "golden", "chat_templates.json"), "utf8"));
const tokens = {};
for (const r of golden.renderings) if (r.bos_token !== undefined) tokens[r.name] = [r.bos_token, r.eos_token];

const templatesDir = path.join(sharedDir, "data", "chat_templates");
const renderings = [];
for (const file of fs.readdirSync(templatesDir).filter((f) => f.endsWith(".jinja")).sort()) {
  const name = file.slice(0, -".jinja".length);
  const source = fs.readFileSync(path.join(templatesDir, file), "utf8");
  const [bos_token, eos_token] = tokens[name];
  for (const c of CONVERSATIONS) {
    for (const add_generation_prompt of [false, true]) {
      const entry = { name, conversation: c.id, messages: c.messages, add_generation_prompt, bos_token, eos_token };
      if (c.extra) entry.extra = c.extra;
      Object.assign(entry, render(source, { ...(c.extra ?? {}), messages: c.messages, add_generation_prompt, bos_token, eos_token }));
      renderings.push(entry);
    }
  }
}
const about = (what) =>
  `${what} Rendered by @huggingface/jinja ${version} (tests/data/render_chat_templates.mjs), strftime_now at 2026-11-30.`;
fs.writeFileSync(
  path.join(here, "chat_templates_extra.json"),
  JSON.stringify({ about: about("The shipped chat templates on harder conversations; 'error' where the reference raises."), renderings }, null, 1) + "\n",
);

const cases = CASES.map(([construct, template, context]) => ({ construct, template, context: context ?? {}, ...render(template, context ?? {}) }));
fs.writeFileSync(
  path.join(here, "jinja_reference_cases.json"),
  JSON.stringify({ about: about("One construct per template; 'error' where the reference raises."), cases }, null, 1) + "\n",
);
console.log(`${renderings.length} renderings, ${cases.length} cases`);
