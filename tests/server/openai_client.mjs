// Drives `eagle2 serve` on the bundled model with the official `openai` npm client, unchanged:
// completions and chat completions, streaming and not, models.list(), a wrong API key (401) and
// an unknown model (404); logprobs on both endpoints. Greedy text must equal `eagle2 generate`'s, streamed text the
// non-streamed text, and usage must add up. Ends the server with SIGTERM: it must exit 0.
//   node tests/server/openai_client.mjs PATH/TO/eagle2
// Exit 77 (skipped) when the npm packages could not be installed.
import fs from "node:fs";
import path from "node:path";
import {
  check, checkEqual, generateRun, requirePackage, runTest, sharedDir, startServer,
} from "./harness.mjs";

const eagle2 = process.argv[2];
if (!eagle2) {
  console.error("usage: node openai_client.mjs PATH/TO/eagle2");
  process.exit(2);
}
const { default: OpenAI } = requirePackage("openai");

const API_KEY = "test-key-7f3a";
const PROMPT = "def fibonacci(n):\n";
const N = 40;
const SPEC = "dynamic:60:5:10";  // a fixed-size EAGLE-2 tree: it drafts every cycle
const TEMPLATE = "meta-llama-Llama-3.1-8B-Instruct.jinja";

const shared = sharedDir();
const template = shared ? path.join(shared, "data", "chat_templates", TEMPLATE) : "";
// As the C++ tests do: without ../shared the chat part is skipped, with it a missing file fails.
const haveTemplate = shared !== "";

function client(apiKey, baseURL) {
  // No retries: a failure must show, not be papered over by a second try.
  return new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: 120000 });
}

function checkUsage(usage, what) {
  check(usage, `${what}: no usage`);
  for (const k of ["prompt_tokens", "completion_tokens", "total_tokens", "target_forwards"]) {
    check(Number.isInteger(usage[k]) && usage[k] >= 0, `${what}: usage.${k} = ${usage[k]}`);
  }
  checkEqual(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens,
             `${what}: usage.total_tokens`);
  // target_forwards counts decode forwards: the prefill gives the first token, and every forward
  // after it commits at least one token (tau counts them, bonus included).
  check(usage.completion_tokens >= 1, `${what}: no tokens`);
  check(usage.target_forwards <= usage.completion_tokens - 1,
        `${what}: usage.target_forwards ${usage.target_forwards} > ${usage.completion_tokens} - 1`);
  check(typeof usage.tau === "number" && usage.tau >= 1, `${what}: usage.tau = ${usage.tau}`);
  if (usage.target_forwards > 0) {
    check(usage.tau * usage.target_forwards >= usage.completion_tokens - 1 - 1e-6,
          `${what}: usage.tau ${usage.tau} x ${usage.target_forwards} forwards < ` +
          `${usage.completion_tokens - 1} tokens after the prefill's`);
  }
}

// Streams a request; returns the concatenated text, the x_eagle2 tokens, the finish reason and
// the usage of the last chunk (stream_options.include_usage).
async function collect(stream, textOf) {
  let text = "";
  const tokens = [];
  let finish = null;
  let usage = null;
  for await (const chunk of stream) {
    const choice = chunk.choices[0];
    if (choice) {
      text += textOf(choice);
      if (choice.finish_reason) finish = choice.finish_reason;
    }
    if (chunk.x_eagle2) tokens.push(...chunk.x_eagle2.tokens);
    if (chunk.usage) usage = chunk.usage;
  }
  return { text, tokens, finish, usage };
}

function checkStreamTokens(s, text, usage, what) {
  checkEqual(s.tokens.map((t) => t.text).join(""), text, `${what}: x_eagle2.tokens texts joined`);
  checkEqual(s.tokens.length, usage.completion_tokens, `${what}: number of x_eagle2.tokens`);
  check(s.tokens.every((t) => typeof t.drafted === "boolean"), `${what}: drafted not a boolean`);
}

async function completions(api, model, generated) {
  const request = { model, prompt: PROMPT, max_tokens: N, temperature: 0 };
  const r = await api.completions.create(request);
  checkEqual(r.object, "text_completion", "completion object");
  const text = r.choices[0].text;
  checkEqual(text, generated.text, "completion text vs eagle2 generate");
  checkUsage(r.usage, "completion");
  checkEqual(r.usage.prompt_tokens, generated.promptTokens, "completion usage.prompt_tokens");
  checkEqual(r.usage.completion_tokens, generated.tokens, "completion usage.completion_tokens");
  checkEqual(r.choices[0].finish_reason, generated.tokens === N ? "length" : "stop",
             "completion finish_reason");

  // The extension field passes through the official client. Plain decoding: the same text, one
  // forward per token.
  const plain = await api.completions.create({ ...request, speculative: "none" });
  checkEqual(plain.choices[0].text, text, "completion text with speculative: none");
  checkEqual(plain.usage.target_forwards, plain.usage.completion_tokens - 1,
             "plain decoding: one target forward per token after the prefill's");
  checkEqual(plain.usage.tau, 1, "plain decoding: usage.tau");
  // A fixed-size EAGLE-2 tree always drafts (an auto-sized one may pause where drafting does not
  // pay, which depends on this machine's timings); the bundled head drafts this code well, so
  // speculation must save target forwards.
  const eagle = { ...request, speculative: SPEC };
  const e = await api.completions.create(eagle);
  checkEqual(e.choices[0].text, text, `completion text with speculative: ${SPEC}`);
  checkUsage(e.usage, `completion, ${SPEC}`);
  check(e.usage.target_forwards < e.usage.completion_tokens - 1 && e.usage.tau > 1,
        `completion, ${SPEC}: ${e.usage.target_forwards} target forwards for ` +
        `${e.usage.completion_tokens} tokens, tau ${e.usage.tau}: nothing drafted was accepted`);

  const s = await collect(
      await api.completions.create({ ...eagle, stream: true,
                                     stream_options: { include_usage: true } }),
      (choice) => choice.text ?? "");
  checkEqual(s.text, text, "streamed completion text vs non-streamed");
  checkEqual(s.finish, e.choices[0].finish_reason, "streamed completion finish_reason");
  checkUsage(s.usage, "streamed completion");
  checkEqual(s.usage.completion_tokens, e.usage.completion_tokens,
             "streamed completion usage.completion_tokens");
  checkEqual(s.usage.prompt_tokens, e.usage.prompt_tokens, "streamed completion usage.prompt_tokens");
  checkStreamTokens(s, text, s.usage, "streamed completion");
  check(s.tokens.some((t) => t.drafted) && s.tokens.some((t) => !t.drafted),
        "streamed completion: want both drafted and target tokens");
  // The target's own tokens: the prefill's, then one per forward (fewer by one where max_tokens
  // cut the last forward's tokens short).
  const own = s.tokens.filter((t) => !t.drafted).length;
  check(own === s.usage.target_forwards + 1 || own === s.usage.target_forwards,
        `streamed completion: ${own} target tokens for ${s.usage.target_forwards} forwards`);
  console.log(`completions: ${JSON.stringify(text)} (${e.usage.completion_tokens} tokens, ` +
              `${e.usage.target_forwards} target forwards with ${SPEC}, tau ${e.usage.tau})`);
}

async function chat(api, model) {
  const messages = [
    { role: "system", content: "You write short Python functions." },
    { role: "user", content: "Write a function that returns the sum of a list." },
  ];
  const request = { model, messages, max_tokens: 32, temperature: 0 };
  const r = await api.chat.completions.create(request);
  checkEqual(r.object, "chat.completion", "chat object");
  checkEqual(r.choices[0].message.role, "assistant", "chat message role");
  const text = r.choices[0].message.content;
  check(typeof text === "string", "chat: no message content");
  checkUsage(r.usage, "chat");
  check(r.usage.completion_tokens >= 1, "chat: no tokens");

  const s = await collect(
      await api.chat.completions.create({ ...request, stream: true,
                                          stream_options: { include_usage: true } }),
      (choice) => choice.delta?.content ?? "");
  checkEqual(s.text, text, "streamed chat text vs non-streamed");
  checkEqual(s.finish, r.choices[0].finish_reason, "streamed chat finish_reason");
  checkUsage(s.usage, "streamed chat");
  checkEqual(s.usage.completion_tokens, r.usage.completion_tokens,
             "streamed chat usage.completion_tokens");
  checkEqual(s.usage.prompt_tokens, r.usage.prompt_tokens, "streamed chat usage.prompt_tokens");
  checkStreamTokens(s, text, s.usage, "streamed chat");
  console.log(`chat: ${JSON.stringify(text)} (${r.usage.completion_tokens} tokens)`);
}

// logprobs through the official client: completions' tokens/token_logprobs/top_logprobs/
// text_offset and chat's logprobs.content, the same numbers with and without speculation (they
// are the target's verified logits).
async function logprobs(api, model, generated) {
  const request = { model, prompt: PROMPT, max_tokens: 12, temperature: 0, logprobs: 3 };
  const plain = await api.completions.create({ ...request, speculative: "none" });
  const eagle = await api.completions.create({ ...request, speculative: SPEC });
  const lp = plain.choices[0].logprobs;
  check(lp && Array.isArray(lp.tokens), "completion logprobs: no tokens");
  checkEqual(lp.tokens.length, plain.usage.completion_tokens, "completion logprobs: tokens");
  checkEqual(lp.tokens.join(""), plain.choices[0].text, "completion logprobs: tokens joined");
  checkEqual(lp.text_offset[1], lp.tokens[0].length, "completion logprobs: text_offset[1]");
  check(lp.token_logprobs.every((x) => typeof x === "number" && x <= 0),
        "completion logprobs: token_logprobs");
  check(lp.top_logprobs.every((t) => Object.keys(t).length >= 1 && Object.keys(t).length <= 4),
        "completion logprobs: top_logprobs sizes");
  checkEqual(JSON.stringify(eagle.choices[0].logprobs), JSON.stringify(lp),
             `completion logprobs with ${SPEC} vs speculative: none`);
  checkEqual(plain.choices[0].text, generated.text.slice(0, plain.choices[0].text.length),
             "completion logprobs: text");
  if (!haveTemplate) return;
  const messages = [{ role: "user", content: "Write a function that adds two numbers." }];
  const chatRequest = { model, messages, max_tokens: 12, logprobs: true, top_logprobs: 2 };
  const c = await api.chat.completions.create({ ...chatRequest, speculative: "none" });
  const content = c.choices[0].logprobs?.content;
  check(Array.isArray(content), "chat logprobs: no content");
  checkEqual(content.length, c.usage.completion_tokens, "chat logprobs: entries");
  for (const t of content) {
    check(typeof t.token === "string" && typeof t.logprob === "number" && Array.isArray(t.bytes),
          `chat logprobs entry ${JSON.stringify(t)}`);
    checkEqual(t.top_logprobs.length, 2, "chat logprobs: top_logprobs per token");
  }
  const ce = await api.chat.completions.create({ ...chatRequest, speculative: SPEC });
  checkEqual(JSON.stringify(ce.choices[0].logprobs), JSON.stringify(c.choices[0].logprobs),
             `chat logprobs with ${SPEC} vs speculative: none`);
  console.log(`logprobs: ${lp.tokens.length} completion tokens, ${content.length} chat tokens, ` +
              "equal with and without speculation");
}

async function errors(api, bad, url, model) {
  // An unknown model is a 404 in OpenAI's error shape, which the client turns into NotFoundError.
  try {
    await api.completions.create({ model: "no-such-model", prompt: PROMPT, max_tokens: 4 });
    check(false, "model no-such-model: no error");
  } catch (e) {
    check(e instanceof OpenAI.NotFoundError, `model no-such-model: ${e}, not a NotFoundError`);
    checkEqual(e.status, 404, "model no-such-model: status");
  }
  // A wrong key is a 401 on every /v1/ route.
  for (const [what, call] of [
    ["models.list", () => bad.models.list()],
    ["completions", () => bad.completions.create({ model, prompt: PROMPT, max_tokens: 4 })],
  ]) {
    try {
      await call();
      check(false, `${what} with a wrong key: no error`);
    } catch (e) {
      check(e instanceof OpenAI.AuthenticationError,
            `${what} with a wrong key: ${e}, not an AuthenticationError`);
      checkEqual(e.status, 401, `${what} with a wrong key: status`);
    }
  }
  // No key at all is a 401 too; /health needs none.
  checkEqual((await fetch(`${url}/v1/models`)).status, 401, "GET /v1/models without a key");
  checkEqual((await fetch(`${url}/health`)).status, 200, "GET /health without a key");
}

runTest(async () => {
  check(!haveTemplate || fs.existsSync(template), `${template} is missing`);
  const generated = generateRun(eagle2, PROMPT, N);
  const args = ["--api-key", API_KEY];
  if (haveTemplate) args.push("--chat-template", template);
  const server = await startServer(eagle2, args);
  let code;
  try {
    const api = client(API_KEY, `${server.url}/v1`);
    const models = await api.models.list();
    checkEqual(models.data.length, 1, "models.list(): number of models");
    const model = models.data[0].id;
    check(typeof model === "string" && model.length > 0, "models.list(): no id");
    await completions(api, model, generated);
    // The alias "default" selects the loaded model as well.
    const alias = await api.completions.create({ model: "default", prompt: PROMPT, max_tokens: 8,
                                                 temperature: 0 });
    check(alias.choices[0].text.length > 0, "model default: no text");
    checkEqual(alias.choices[0].text, generated.text.slice(0, alias.choices[0].text.length),
               "model default: text");
    if (haveTemplate) {
      await chat(api, model);
    } else {
      console.log(`chat: skipped, ${TEMPLATE} not found (no ../shared and no $EAGLE2_SHARED)`);
      // The bundled model has no template of its own: without --chat-template, chat is a 400.
      try {
        await api.chat.completions.create({ model, messages: [{ role: "user", content: "hi" }] });
        check(false, "chat without a template: no error");
      } catch (e) {
        check(e instanceof OpenAI.BadRequestError, `chat without a template: ${e}, not a 400`);
      }
    }
    await logprobs(api, model, generated);
    await errors(api, client("wrong-key", `${server.url}/v1`), server.url, model);
  } finally {
    code = await server.stop();
  }
  checkEqual(code, 0, "eagle2 serve's exit code after SIGTERM");
});
