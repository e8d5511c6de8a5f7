import { strict as assert } from "node:assert";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { cellPlaces, escapeXml, graphHtml, GraphNode, GraphStep, lineLabel, MIN_WIDTH, moduleNodes, stepSvg, TrainingGraph, WIDTH } from "../../src/graph";

// Real output of the server's gradaudit.showTrainingGraph for three of the bundled examples;
// tests/vscode/test_extension.py checks that the engine still produces exactly these.
const fixture = (name: string): TrainingGraph =>
    JSON.parse(readFileSync(join(__dirname, "..", "..", "..", "test", "unit", "fixtures", `graph_${name}.json`), "utf8"));
const page = (g: TrainingGraph) => graphHtml(g, { nonce: "n", cspSource: "c", title: "t" });
const node = (over: Partial<GraphNode>): GraphNode => ({
    name: "m", module: "m", params: ["m.w"], count: 1, state: "reached", held_by: [0], cuts: [], optimized: true, findings: [], ...over,
});

test("GAN: the generator behind fake.detach() is a valid stop-gradient, drawn apart from defects", () => {
    const g = fixture("gan_training");
    const d = g.steps.find((s) => s.loss === "d_loss")!;
    const nodes = moduleNodes(d);
    const gen = nodes.filter((n) => n.name.startsWith("generator."));
    assert.equal(gen.length, 3);
    assert.ok(gen.every((n) => n.state === "stopped" && n.cut[0].startsWith(".detach()")));
    assert.ok(nodes.filter((n) => n.name.startsWith("discriminator.")).every((n) => n.state === "reached"));
    assert.deepEqual(d.findings, []);
    // opt_g holds the generator but is not stepped in this step
    const optG = d.optimizers.findIndex((o) => o.name === "opt_g");
    assert.ok(gen.every((n) => n.heldBy.includes(optG)));
    const svg = stepSvg(d, 0);
    assert.match(svg, /class="opt unstepped" data-line="\d+"/);
    assert.equal((svg.match(/class="edge stopped"/g) ?? []).length, 3);
    assert.equal((svg.match(/class="edge cut"/g) ?? []).length, 0);          // no defect drawn
    assert.equal((svg.match(/class="module stopped"/g) ?? []).length, 3);
    assert.match(svg, /stop-gradient \.detach\(\) \(valid\)/);
    assert.equal((svg.match(/class="edge reached"/g) ?? []).length, 3);
});

test("finetune: the replaced head is not held by the optimizer; its old parameters are", () => {
    const g = fixture("finetune_classifier");
    const [step] = g.steps;
    const fc = step.nodes.find((n) => n.name === "model.fc")!;
    assert.deepEqual([fc.state, fc.held_by, fc.optimized, fc.findings], ["reached", [], false, ["GA108"]]);
    const old = step.nodes.find((n) => n.name === "model.fc (earlier parameters)")!;
    assert.deepEqual([old.state, old.held_by, old.count], ["unreached", [0], 2]);
    const svg = stepSvg(step, 0);
    assert.match(svg, /class="module reached unoptimized"/);
    assert.match(svg, /2 params · reaches the loss, in no optimizer</);
    assert.match(svg, /2 params · held by an optimizer, not reached</);
    // the center loss cut by .item() is a defect (GA103) and says how many parameters it has
    const center = step.nodes.find((n) => n.name === "center_loss")!;
    assert.deepEqual([center.state, center.count, center.findings], ["cut", 1, ["GA103"]]);
    assert.match(svg, /1 param · cut by \.item\(\) \(line 96\)/);
    assert.equal((svg.match(/class="edge cut"/g) ?? []).length, 1);
    assert.match(svg, /<g class="badge" data-line="96"><title>GA103 python-scalar-in-loss \(line 96\)/);
    assert.match(svg, /<g class="badge" data-line="137">/);
    assert.ok(!/[^\d]0 params/.test(svg));
});

test("finetune: the calls of one iteration in the user's own words", () => {
    const g = fixture("finetune_classifier");
    const labels = g.steps[0].events.map((e) => e.label);
    assert.deepEqual(labels, ["optimizer.zero_grad()", "loss.backward()", "optimizer.step()", "scheduler.step()"]);
    const html = page(g);
    assert.match(html, />scheduler\.step\(\) <span class="line">line 100<\/span>/);
    assert.ok(!/sched_step\(|>clip\(/.test(html));      // not the engine's internal names
});

test("text trainer: unregistered layers (GA109) and the detached encoder (GA101) are on the graph", () => {
    const g = fixture("text_trainer");
    const [step] = g.steps;
    const proj = step.nodes.find((n) => n.name.startsWith("model.layer_proj"))!;
    assert.deepEqual([proj.state, proj.optimized, proj.findings], ["reached", false, ["GA109"]]);
    assert.ok(step.nodes.filter((n) => n.findings.includes("GA101")).every((n) => n.state === "cut"));
    assert.deepEqual(step.events.map((e) => e.label), ["self.optimizer.zero_grad()", "loss.backward()", "clip_grad_norm_()", "self.optimizer.step()"]);
    const html = page(g);
    assert.deepEqual([...html.matchAll(/<li class="finding (\w+)" data-line="(\d+)"><span class="code">(GA\d+)/g)].map((m) => `${m[3]}:${m[2]}`),
        ["GA109:27", "GA101:77"]);
    assert.match(html, /Findings of this step/);
});

test("the diagram scales down to the view and scrolls only below a minimum", () => {
    const svg = stepSvg(fixture("finetune_classifier").steps[0], 0);
    assert.match(svg, new RegExp(`viewBox="0 0 ${WIDTH} \\d+"`));
    const html = page(fixture("finetune_classifier"));
    assert.match(html, new RegExp(`svg\\.graph \\{ display: block; width: 100%; max-width: ${WIDTH}px; min-width: ${MIN_WIDTH}px; height: auto;`));
    assert.match(html, /\.diagram \{ overflow-x: auto;/);
    assert.ok(WIDTH <= 800 && MIN_WIDTH < 600);
});

test("hundreds of modules are collapsed by prefix, keeping the worst state and the findings", () => {
    const nodes = Array.from({ length: 200 }, (_, i) => node({ name: `model.layers.${i}.attn`, module: `model.layers.${i}.attn` }));
    nodes.push(node({ name: "model.head", module: "model.head", state: "cut", cuts: [".detach() (line 5)"], findings: ["GA101"] }));
    const step: GraphStep = {
        loss: "loss", function: "", line: 1, path: "x.py", unknown: false, owner: "model", nodes,
        optimizers: [], events: [], findings: [],
    };
    const rows = moduleNodes(step, 24);
    assert.ok(rows.length <= 24, `${rows.length} rows`);
    assert.equal(rows.reduce((s, n) => s + n.params, 0), 201);
    assert.ok(rows.some((n) => n.state === "cut" && n.findings.includes("GA101")));
});

test("findings on no module sit by the loss, and findings outside every step are listed", () => {
    const step: GraphStep = {
        loss: "loss", function: "f", line: 9, path: "x.py", unknown: false, owner: "m", nodes: [node({})],
        optimizers: [{ name: "opt", type: "SGD", line: 2, stepped: true, groups: [{ count: 1, options: [], exact: true }] }],
        events: [], findings: [{ code: "GA110", name: "inplace-saved-tensor", confidence: "confirmed", line: 7, path: "x.py",
            message: "in-place", params: [], on: "step", nodes: [] }],
    };
    assert.match(stepSvg(step, 0), /<g class="badge" data-line="7">/);
    const html = page({ steps: [step], findings: [{ code: "GA111", name: "inplace-leaf-update", confidence: "suspicious", line: 30,
        path: "x.py", message: "manual update", params: ["w"], on: "step", nodes: [] }] });
    assert.match(html, /Other findings in this file/);
    assert.match(html, /<li class="finding suspicious" data-line="30">/);
});

test("a finding about a call of the iteration is drawn on that call", () => {
    const step: GraphStep = {
        loss: "loss", function: "f", line: 9, path: "x.py", unknown: false, owner: "m", nodes: [node({})], optimizers: [],
        events: [{ kind: "sched_step", line: 8, path: "x.py", target: "scheduler", label: "scheduler.step()", findings: ["GA207"] },
            { kind: "backward", line: 9, path: "x.py", label: "loss.backward()", findings: [] }],
        findings: [{ code: "GA207", name: "scheduler-before-step", confidence: "confirmed", line: 8, path: "x.py", message: "m",
            params: [], on: "event", nodes: [] }],
    };
    const html = page({ steps: [step] });
    assert.match(html, /<button class="event sched_step flagged" data-line="8">scheduler\.step\(\) <span class="line">line 8<\/span> <span class="code">GA207<\/span><\/button>/);
    assert.match(html, /<button class="event backward" data-line="9">/);
    assert.ok(!stepSvg(step, 0).includes("GA207"));       // not also a badge by the loss
});

test("the page escapes everything that comes from the code", () => {
    const evil: TrainingGraph = { uri: "file:///x.py", steps: [{
        loss: "<img src=x onerror=alert(1)>", function: "f\"'", line: 3, path: "x.py", unknown: true, owner: "",
        nodes: [node({ name: "m<script>", findings: ["GA1<b>"] })],
        optimizers: [{ name: "o&", type: "SGD", line: 1, stepped: true, groups: [] }],
        events: [{ kind: "backward", line: 3, path: "x.py", target: "<b>", label: "<b>.backward()" }],
        findings: [{ code: "GA1<b>", name: "n", confidence: "confirmed", line: 3, path: "x.py", message: "<i>x</i>", params: [], on: "node", nodes: ["m<script>"] }],
    }] };
    const html = graphHtml(evil, { nonce: "N0NCE", cspSource: "vscode-resource:", title: "T<i>" });
    assert.ok(!html.includes("<img"));
    assert.ok(!html.includes("m<script>"));
    assert.ok(!html.includes("<b>"));
    assert.ok(!html.includes("<i>"));
    assert.match(html, /script-src 'nonce-N0NCE'/);
    assert.equal((html.match(/<script /g) ?? []).length, 1);
    assert.match(html, /may miss modules/);
    assert.equal(escapeXml(`<a href="x">&'`), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
});

test("finetune example: events in order, clickable lines, focus on the lens's step", () => {
    const g = fixture("finetune_classifier");
    g.focus = g.steps[0].line;
    const html = graphHtml(g, { nonce: "n", cspSource: "c", title: "Training steps of finetune_classifier.py" });
    const kinds = [...html.matchAll(/class="event (\w+)" data-line="(\d+)"/g)].map((m) => m[1]);
    assert.deepEqual(kinds.slice(0, 3), ["zero_grad", "backward", "step"]);
    assert.match(html, /class="step focus"/);
    assert.match(html, /group 2: 1 param \(weight_decay\)/);
});

test("no training step: an explanation, no diagram", () => {
    const html = graphHtml({ steps: [] }, { nonce: "n", cspSource: "c", title: "t" });
    assert.match(html, /No training step in this file/);
    assert.ok(!html.includes("<svg"));
});

test("a notebook's graph names cells and lines in cells; a click leads to the cell", () => {
    const g = fixture("text_trainer");
    const step = g.steps[0];
    const nb: TrainingGraph = {
        ...g, notebook: true, uri: "file:///w/lesson.ipynb",
        steps: [{ ...step, cell: 6, cellLine: 5, cellUri: "vscode-notebook-cell:/w/lesson.ipynb#W5",
            events: step.events.map((e) => ({ ...e, cell: 6, cellLine: e.line - 20, cellUri: "vscode-notebook-cell:/w/lesson.ipynb#W5" })) }],
    };
    assert.equal(lineLabel({ line: 40 }), "line 40");
    assert.equal(lineLabel(nb.steps[0]), "cell 6, line 5");
    const html = page(nb);
    assert.ok(html.includes("backward() · cell 6, line 5"));
    assert.ok(!html.includes(`· line ${step.line}<`));
    const places = cellPlaces(nb);
    assert.deepEqual(places.get(step.line), { cell: 6, cellLine: 5, cellUri: "vscode-notebook-cell:/w/lesson.ipynb#W5" });
    assert.equal(cellPlaces(g).size, 0);
});

test("a count that is a lower bound says so, and a location in another file names its file", () => {
    const step: GraphStep = {
        loss: "loss", function: "<module>", line: 9, path: "bench.py", unknown: false, owner: "model",
        nodes: [node({ name: "model.blocks.0", count: 2, at_least: true }), node({ name: "model.head", count: 2 })],
        optimizers: [{ name: "optimizer", type: "AdamW", line: 284, path: "src/model.py", stepped: true, groups: [] }],
        events: [
            { kind: "zero_grad", line: 7, path: "bench.py", target: "optimizer" },
            { kind: "clip", line: 40, path: "src/utils.py" },
        ],
        findings: [],
    };
    const svg = stepSvg(step, 0);
    assert.match(svg, /≥2 params · /);
    assert.match(svg, />2 params · /);
    // the optimizer built in model.py is not "line 284" of bench.py, and a click does not jump there
    assert.match(svg, /optimizer = AdamW\(\.\.\.\) at model\.py:284/);
    assert.doesNotMatch(svg, /data-line="284"/);
    const html = page({ steps: [step], uri: "file:///p/bench.py" });
    assert.match(html, /data-line="7">optimizer\.zero_grad\(\) <span class="line">line 7<\/span>/);
    assert.match(html, /<button class="event clip">clip\(\) <span class="line">utils\.py:40<\/span>/);
});
