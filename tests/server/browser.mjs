// Drives the web page of `eagle2 serve` in headless Chromium (puppeteer-core, Debian's chromium):
// types a prompt, presses Send, waits for the answer to end, and checks that the answer equals the
// non-streamed /v1/completions text for the same request, that its tokens are colored spans
// (.tok.drafted and .tok.target, both present with the bundled EAGLE head) that spell the answer,
// and that #stats shows tokens/s and τ. Saves a screenshot.
//   node tests/server/browser.mjs PATH/TO/eagle2 SCREENSHOT.png [--readme]
// --readme (or EAGLE2_README_SCREENSHOT=1) also writes docs/images/serve_page.png.
// Exit 77 (skipped) only when chromium or puppeteer-core could not be installed.
import fs from "node:fs";
import path from "node:path";
import {
  check, checkEqual, chromiumPath, repoRoot, requirePackage, runTest, startServer,
} from "./harness.mjs";

const [eagle2, screenshot] = process.argv.slice(2);
if (!eagle2 || !screenshot) {
  console.error("usage: node browser.mjs PATH/TO/eagle2 SCREENSHOT.png [--readme]");
  process.exit(2);
}
const readme = process.argv.includes("--readme") || process.env.EAGLE2_README_SCREENSHOT === "1";
const chromium = chromiumPath();
const puppeteer = requirePackage("puppeteer-core");

const PROMPT = 'def fibonacci(n):\n    """Return the n-th Fibonacci number."""\n';
const MAX_TOKENS = 64;
// A fixed-size EAGLE-2 tree, one of the page's choices: it drafts every cycle, where the server's
// default (an auto-sized tree) may pause drafting on a machine where it does not pay.
const SPEC = "dynamic:60:5:10";
// The suffix drafter, also one of the page's choices: its drafted tokens are coloured apart
// (span.tok.drafted.suffix, from x_eagle2.tokens[].source), where the head's never are.
const SUFFIX_SPEC = "suffix";
const WAIT_MS = 120000;

// What the page sends for a completion at temperature 0 with drafter SPEC, minus the streaming:
// the text the page shows must be this text.
async function apiCompletion(url, spec) {
  const response = await fetch(`${url}/v1/completions`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ prompt: PROMPT, max_tokens: MAX_TOKENS, temperature: 0,
                           speculative: spec }),
  });
  checkEqual(response.status, 200, "POST /v1/completions status");
  return response.json();
}

async function drivePage(page, url, spec) {
  await page.goto(`${url}/`, { waitUntil: "load" });
  checkEqual(await page.title(), "eagle2 serve", "page title");
  // Fresh values in every field the request is built from, typed as a user would.
  await page.$eval("#mode", (e) => { e.value = "completion"; });
  const selected = await page.select("#speculative", spec);
  checkEqual(selected.join(), spec, "#speculative choice");
  for (const [id, value] of [["#max-tokens", String(MAX_TOKENS)], ["#temperature", "0"],
                             ["#prompt", PROMPT]]) {
    await page.$eval(id, (e) => { e.value = ""; });
    await page.type(id, value);
  }
  checkEqual(await page.$eval("#prompt", (e) => e.value), PROMPT, "#prompt after typing");
  await page.click("#send");
  // The page marks the end of an answer with data-done="1" on #stats ("0" while it streams).
  await page.waitForSelector('#stats[data-done="1"]', { timeout: WAIT_MS });
  return page.evaluate(() => {
    const out = document.getElementById("output");
    const prompt = out.querySelector(".prompt-text");
    const tokens = [...out.querySelectorAll("span.tok")].map((s) => ({
      text: s.textContent,
      drafted: s.classList.contains("drafted"),
      target: s.classList.contains("target"),
      suffix: s.classList.contains("suffix"),
    }));
    return {
      prompt: prompt ? prompt.textContent : null,
      // The answer as the user sees it: everything in #output after the echoed prompt.
      answer: out.textContent.slice(prompt ? prompt.textContent.length : 0),
      tokens,
      errors: [...out.querySelectorAll(".error")].map((e) => e.textContent),
      stats: document.getElementById("stats").textContent,
      send: document.getElementById("send").textContent,
    };
  });
}

runTest(async () => {
  const server = await startServer(eagle2);
  let browser;
  let code;
  try {
    const expected = await apiCompletion(server.url, SPEC);
    browser = await puppeteer.launch({
      executablePath: chromium,
      headless: true,
      // CI runs as root, where Chromium's sandbox refuses to start (the page is our own), and
      // containers often have a small /dev/shm.
      args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-dev-shm-usage"],
    });
    const page = await browser.newPage();
    await page.setViewport({ width: 1100, height: 640 });
    const consoleErrors = [];
    // The browser asks for /favicon.ico on its own; the page has none, and a 404 there is fine.
    const ours = (url) => !url.endsWith("/favicon.ico");
    page.on("console", (m) => {
      if (m.type() === "error" && ours(m.location().url ?? "")) consoleErrors.push(m.text());
    });
    page.on("response", (r) => {
      if (r.status() >= 400 && ours(r.url())) consoleErrors.push(`${r.status()} ${r.url()}`);
    });
    page.on("pageerror", (e) => consoleErrors.push(String(e)));

    const shown = await drivePage(page, server.url, SPEC);
    console.log(`page: ${JSON.stringify(shown.answer)}; stats ${JSON.stringify(shown.stats)}`);
    checkEqual(shown.errors.length, 0, `errors on the page (${shown.errors.join("; ")})`);
    checkEqual(consoleErrors.length, 0, `console errors (${consoleErrors.join("; ")})`);
    checkEqual(shown.prompt, PROMPT, "the echoed prompt");
    checkEqual(shown.answer, expected.choices[0].text, "the page's answer vs /v1/completions");
    checkEqual(shown.send, "Send", "#send after the answer");

    check(shown.tokens.every((t) => t.drafted !== t.target),
          "every span.tok is exactly one of drafted, target");
    checkEqual(shown.tokens.map((t) => t.text).join(""), shown.answer,
               "the colored spans joined vs the answer");
    const drafted = shown.tokens.filter((t) => t.drafted).length;
    const target = shown.tokens.length - drafted;
    check(drafted >= 1, "no .tok.drafted span: the bundled head drafted nothing that was accepted");
    check(target >= 1, "no .tok.target span");
    check(shown.tokens.every((t) => !t.suffix), "an EAGLE head's token coloured as suffix-drafted");

    // "N tokens · X tokens/s · τ Y", with the server's own τ once the answer has ended.
    const m = shown.stats.match(/^(\d+) tokens · ([\d.]+) tokens\/s · τ ([\d.]+)$/);
    check(m, `#stats ${JSON.stringify(shown.stats)} does not show tokens/s and τ`);
    checkEqual(Number(m[1]), expected.usage.completion_tokens, "#stats token count");
    check(Number(m[2]) > 0, `#stats tokens/s ${m[2]}`);
    check(Number(m[3]) > 1, `#stats τ ${m[3]}: speculation accepted drafted tokens, so τ > 1`);

    // The suffix drafter: the same text as the API's, every drafted token coloured as the suffix
    // index's (the code model's answer repeats itself, so some are).
    const suffixExpected = await apiCompletion(server.url, SUFFIX_SPEC);
    const bySuffix = await drivePage(page, server.url, SUFFIX_SPEC);
    checkEqual(bySuffix.answer, suffixExpected.choices[0].text, "the suffix answer vs the API's");
    const suffixDrafted = bySuffix.tokens.filter((t) => t.drafted);
    check(suffixDrafted.length >= 1, "the suffix drafter drafted nothing that was accepted");
    check(suffixDrafted.every((t) => t.suffix), "a suffix-drafted token not coloured as such");
    check(bySuffix.tokens.every((t) => !t.suffix || t.drafted), "a target token coloured suffix");
    console.log(`suffix: ${suffixDrafted.length} of ${bySuffix.tokens.length} tokens drafted`);

    fs.mkdirSync(path.dirname(path.resolve(screenshot)), { recursive: true });
    await page.screenshot({ path: screenshot, fullPage: true });
    console.log(`screenshot: ${screenshot}`);
    if (readme) {
      const docs = path.join(repoRoot, "docs", "images", "serve_page.png");
      fs.mkdirSync(path.dirname(docs), { recursive: true });
      fs.copyFileSync(screenshot, docs);
      console.log(`screenshot: ${docs}`);
    }
  } finally {
    if (browser) await browser.close();
    code = await server.stop();
  }
  checkEqual(code, 0, "eagle2 serve's exit code after SIGTERM");
});
