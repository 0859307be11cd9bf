// Take screenshots of the UI in Debian's Chromium through playwright-core (no downloaded browser).
// Usage: node e2e/screenshot.mjs [baseUrl] [outDir]
//   baseUrl defaults to http://127.0.0.1:2026 (the gateway), outDir to test-results/screens.
import { mkdir } from "node:fs/promises";
import { chromium } from "playwright-core";

const base = process.argv[2] ?? "http://127.0.0.1:2026";
const out = process.argv[3] ?? "test-results/screens";
const executablePath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

await mkdir(out, { recursive: true });
const browser = await chromium.launch({ executablePath, headless: true, args: ["--no-sandbox"] });
try {
  const shots = [
    { name: "desktop-light", viewport: { width: 1280, height: 800 }, colorScheme: "light" },
    { name: "desktop-dark", viewport: { width: 1280, height: 800 }, colorScheme: "dark" },
    { name: "phone-light", viewport: { width: 390, height: 844 }, colorScheme: "light" },
  ];
  for (const shot of shots) {
    const page = await browser.newPage({ viewport: shot.viewport, colorScheme: shot.colorScheme });
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(base, { waitUntil: "networkidle" });
    await page.screenshot({ path: `${out}/${shot.name}.png` });
    if (errors.length) console.error(`${shot.name}: page errors:\n${errors.join("\n")}`);
    await page.close();
    console.log(`${out}/${shot.name}.png`);
  }
} finally {
  await browser.close();
}
