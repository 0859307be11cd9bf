// Fails when the JavaScript a browser must fetch before the app can start — the entry script of
// dist/index.html and the chunks it modulepreloads — is over the budget, gzipped (issue 31: the
// first download stays small; pages, settings and the Markdown/highlight renderers load later).
//   node scripts/check-initial-js.mjs [dist-dir]      (after `npm run build`)
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { gzipSync } from "node:zlib";

/** Budget in bytes, gzipped (200 kB as Vite reports sizes: 1 kB = 1000 bytes). */
const BUDGET = 200_000;

const dist = resolve(process.argv[2] ?? "dist");
const html = readFileSync(join(dist, "index.html"), "utf8");

// <script type="module" src="/assets/x.js"> and <link rel="modulepreload" href="/assets/y.js">
const tags = html.match(/<(script|link)\b[^>]*>/g) ?? [];
const files = [];
for (const tag of tags) {
  const isEntry = /^<script\b/.test(tag) && /type="module"/.test(tag);
  const isPreload = /^<link\b/.test(tag) && /rel="modulepreload"/.test(tag);
  const url = (tag.match(/\b(?:src|href)="([^"]+)"/) ?? [])[1];
  if ((isEntry || isPreload) && url && url.startsWith("/")) files.push(url);
}
if (!files.some((f) => f.endsWith(".js"))) {
  console.error(`check-initial-js: no entry script found in ${join(dist, "index.html")}`);
  process.exit(2);
}

let total = 0;
for (const file of files) {
  const size = gzipSync(readFileSync(join(dist, file)), { level: 9 }).length;
  total += size;
  console.log(`${(size / 1000).toFixed(2).padStart(9)} kB gz  ${file}`);
}
const verdict = total <= BUDGET ? "ok" : "OVER BUDGET";
console.log(`${(total / 1000).toFixed(2).padStart(9)} kB gz  initial JS (budget ${BUDGET / 1000} kB): ${verdict}`);
if (total > BUDGET) {
  console.error("Split what the first page does not need (React.lazy / import()) — see docs/ui.md.");
  process.exit(1);
}
