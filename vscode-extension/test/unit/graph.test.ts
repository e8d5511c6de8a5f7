import { strict as assert } from "node:assert";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { escapeXml, graphHtml, GraphStep, moduleNodes, stepSvg, TrainingGraph } from "../../src/graph";

// Real output of the server's gradaudit.showTrainingGraph for two of the bundled examples;
// tests/test_vscode_extension.py checks that the engine still produces exactly these.
const fixture = (name: string): TrainingGraph =>
    JSON.parse(readFileSync(join(__dirname, "..", "..", "..", "test", "unit", "fixtures", `graph_${name}.json`), "utf8"));

test("GAN: the generator is cut from the discriminator's loss by detach()", () => {
    const g = fixture("gan_training");
    const d = g.steps.find((s) => s.loss === "d_loss")!;
    const nodes = moduleNodes(d);
    const gen = nodes.filter((n) => n.name.startsWith("generator."));
    assert.equal(gen.length, 3);
    assert.ok(gen.every((n) => n.state === "cut" && n.cut[0].startsWith(".detach()")));
    assert.ok(nodes.filter((n) => n.name.startsWith("discriminator.")).every((n) => n.state === "reached"));
    // opt_g holds the generator but is not stepped in this step
    const optG = d.optimizers.findIndex((o) => o.name === "opt_g");
    assert.ok(gen.every((n) => n.heldBy.includes(optG)));
    const svg = stepSvg(d, 0);
    assert.match(svg, /class="opt unstepped" data-line="\d+"/);
    assert.equal((svg.match(/class="edge cut"/g) ?? []).length, 3);
    assert.equal((svg.match(/class="edge reached"/g) ?? []).length, 3);
});

test("a module only the optimizer holds is drawn as unreached", () => {
    const step: GraphStep = {
        loss: "loss", function: "train", line: 10, path: "t.py", unknown: false, owner: "model",
        modules: [{ name: "model.body", params: ["model.body.weight"], frozen: false, cut: [] }],
        cut_only: [],
        optimizers: [{ name: "opt", type: "Adam", line: 3, stepped: true, groups: [
            { params: ["model.body.weight", "head.weight", "head.bias"], options: ["lr"], modules: ["model.body", "head"] }] }],
        events: [],
    };
    const nodes = moduleNodes(step);
    assert.deepEqual(nodes.map((n) => [n.name, n.state, n.params]), [["head", "unreached", 2], ["model.body", "reached", 1]]);
});

test("hundreds of modules are collapsed by prefix, keeping the worst state", () => {
    const modules = Array.from({ length: 200 }, (_, i) => ({
        name: `model.layers.${i}.attn`, params: [`model.layers.${i}.attn.w`], frozen: false, cut: [],
    }));
    const step: GraphStep = {
        loss: "loss", function: "", line: 1, path: "x.py", unknown: false, owner: "model", modules,
        cut_only: [{ name: "model.head", cut: [".detach() (line 5)"] }], optimizers: [], events: [],
    };
    const nodes = moduleNodes(step, 24);
    assert.ok(nodes.length <= 24, `${nodes.length} rows`);
    const layers = nodes.find((n) => n.name.startsWith("model.layers.*"));
    assert.ok(layers === undefined || layers.params === 200);
    const total = nodes.reduce((s, n) => s + n.params, 0);
    assert.equal(total, 200);
    assert.ok(nodes.some((n) => n.state === "cut"));
});

test("the page escapes everything that comes from the code", () => {
    const evil: TrainingGraph = { uri: "file:///x.py", steps: [{
        loss: "<img src=x onerror=alert(1)>", function: "f\"'", line: 3, path: "x.py", unknown: true, owner: "",
        modules: [{ name: "m<script>", params: ["a"], frozen: false, cut: [] }], cut_only: [],
        optimizers: [{ name: "o&", type: "SGD", line: 1, stepped: true, groups: [] }],
        events: [{ kind: "backward", line: 3, path: "x.py", target: "<b>" }],
    }] };
    const html = graphHtml(evil, { nonce: "N0NCE", cspSource: "vscode-resource:", title: "T<i>" });
    assert.ok(!html.includes("<img"));
    assert.ok(!html.includes("m<script>"));
    assert.ok(!html.includes("<b>"));
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
