// The audit report in the Chromium the end-to-end tests install (playwright-core from .e2e/):
// 1. every ```mermaid block of REPORT.md rendered by the real mermaid package (node_modules/mermaid),
//    with no parse error; the cut edges drawn red; screenshot report-mermaid.png;
// 2. REPORT.html opened from disk with every request recorded: the page itself is the only one;
//    screenshot report-html.png.
// Prints one JSON line with what it saw; exit 0 when both hold.
//
//   node test/e2e/report.mjs REPORT.md REPORT.html ARTIFACTS_DIR
import { mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ext = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
const [mdPath, htmlPath, artifacts] = process.argv.slice(2).map((p) => resolve(p));
const { chromium } = createRequire(join(ext, ".e2e", "code-server", "package.json"))("playwright-core");
const mermaidJs = join(ext, "node_modules", "mermaid", "dist", "mermaid.min.js");
mkdirSync(artifacts, { recursive: true });

const md = readFileSync(mdPath, "utf8");
const blocks = [...md.matchAll(/^```mermaid\n([\s\S]*?)\n```$/gm)].map((m) => m[1]);

const browser = await chromium.launch({
    executablePath: "/usr/bin/chromium", headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update"],
});
const out = { blocks: blocks.length };
let ok = blocks.length > 0;
try {
    // 1. Mermaid
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await page.setContent("<!doctype html><html><body style='font-family:sans-serif'><div id='out'></div></body></html>");
    await page.addScriptTag({ path: mermaidJs });
    const rendered = await page.evaluate(async (sources) => {
        window.mermaid.initialize({ startOnLoad: false, securityLevel: "strict" });
        const results = [];
        for (const [i, text] of sources.entries()) {
            const box = document.createElement("section");
            document.getElementById("out").appendChild(box);
            try {
                await window.mermaid.parse(text);
                const { svg } = await window.mermaid.render(`g${i}`, text);
                box.innerHTML = svg;
                const el = box.querySelector("svg");
                const paths = [...el.querySelectorAll("path")];
                results.push({
                    ok: true,
                    nodes: el.querySelectorAll("g.node").length,
                    edges: el.querySelectorAll(".edgePaths path, path.flowchart-link").length,
                    red: paths.filter((p) => (p.getAttribute("style") || "").includes("#c62828")).length,
                    grey: paths.filter((p) => (p.getAttribute("style") || "").includes("#607d8b")).length,
                    width: el.getBoundingClientRect().width,
                });
            } catch (e) {
                results.push({ ok: false, error: String(e && e.message || e) });
            }
        }
        return results;
    }, blocks);
    out.mermaid = rendered;
    ok = ok && rendered.every((r) => r.ok && r.nodes >= 4 && r.edges >= 3 && r.width > 100);
    out.cutEdges = rendered.reduce((n, r) => n + (r.red || 0), 0);
    out.stopEdges = rendered.reduce((n, r) => n + (r.grey || 0), 0);
    await page.screenshot({ path: join(artifacts, "report-mermaid.png"), fullPage: true });
    await page.close();

    // 2. the HTML page: nothing but itself is requested
    const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
    const requests = [];
    context.on("request", (r) => requests.push(r.url()));
    const html = await context.newPage();
    const url = pathToFileURL(htmlPath).href;
    await html.goto(url, { waitUntil: "load" });
    await html.waitForTimeout(500);
    out.requests = requests;
    out.htmlGraphs = await html.locator("svg.graph").count();
    out.htmlSections = await html.locator("h2").allInnerTexts();
    out.htmlNodes = await html.locator("svg.graph g.node").count();
    await html.screenshot({ path: join(artifacts, "report-html.png"), fullPage: false });
    ok = ok && requests.length === 1 && requests[0] === url && out.htmlGraphs > 0 && out.htmlSections.length === 5;
    await context.close();
} finally {
    await browser.close();
}
console.log(JSON.stringify(out));
process.exit(ok ? 0 : 1);
