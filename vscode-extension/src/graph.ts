// The training-step graph (the server's `gradaudit.showTrainingGraph` result, built by the engine's
// analysis/report/editor_graph.py from the model and the findings) drawn as an SVG diagram for a webview:
// modules on the left, the loss in the middle, optimizers on the right, findings on the nodes
// they concern. Pure: no `vscode` import; the unit tests render real server output.

/** How a module takes part in a step (decided by the engine). */
export type NodeState = "reached" | "cut" | "stopped" | "frozen" | "unreached";

export interface GraphNode {
    name: string; module: string; params: string[]; count: number; state: NodeState;
    /** `count` is a lower bound: layers built in a loop the engine followed once. */
    at_least?: boolean;
    /** Optimizers (by index) holding parameters of this node. */
    held_by: number[];
    cuts: string[];
    /** Some optimizer stepped for this loss holds its parameters. */
    optimized: boolean;
    /** Codes of the findings about these parameters. */
    findings: string[];
}
export interface GraphGroup { count: number; options: string[]; exact: boolean }
/** In a notebook, where a part is: its cell (1-based), the line in that cell and the cell's document. */
export interface InCell { cell?: number; cellLine?: number; cellUri?: string }
export interface GraphOptimizer extends InCell { name: string; type: string; line: number; path?: string; stepped: boolean; groups: GraphGroup[] }
export interface GraphEvent extends InCell { kind: string; line: number; path: string; target?: string; label?: string; findings?: string[] }
export interface GraphFinding extends InCell {
    code: string; name: string; confidence: string; line: number; path: string; message: string;
    /** Where it is drawn: on module nodes, on a call of the iteration, or by the loss. */
    params: string[]; on: "step" | "node" | "event"; nodes: string[];
}
export interface GraphStep extends InCell {
    loss: string; function: string; line: number; path: string;
    nodes: GraphNode[]; optimizers: GraphOptimizer[]; events: GraphEvent[]; findings: GraphFinding[];
    unknown: boolean; owner: string;
}
export interface TrainingGraph {
    path?: string; uri?: string; steps: GraphStep[]; findings?: GraphFinding[]; focus?: number; error?: string;
    /** A notebook's graph: parts carry their cell (InCell); `line` is a line of the cells analysed as one source. */
    notebook?: boolean;
}

/** "line 12", or in a notebook "cell 4, line 2". */
export function lineLabel(part: { line: number } & InCell): string {
    return part.cell !== undefined && part.cellLine !== undefined ? `cell ${part.cell}, line ${part.cellLine}` : `line ${part.line}`;
}

/** Every part of a notebook's graph that has a cell, by its `line`: where a click in the view leads. */
export function cellPlaces(graph: TrainingGraph): Map<number, InCell> {
    const out = new Map<number, InCell>();
    const add = (p: { line: number } & InCell) => {
        if (p.cellUri && !out.has(p.line)) {
            out.set(p.line, { cell: p.cell, cellLine: p.cellLine, cellUri: p.cellUri });
        }
    };
    for (const step of graph.steps) {
        add(step);
        step.optimizers.forEach(add);
        step.events.forEach(add);
        step.findings.forEach(add);
    }
    (graph.findings ?? []).forEach(add);
    return out;
}

/** A drawn row: a node, or several collapsed by name prefix. */
export interface Node {
    name: string;
    params: number;
    atLeast: boolean;
    state: NodeState;
    cut: string[];
    heldBy: number[];
    optimized: boolean;
    findings: string[];
}

const MAX_ROWS = 24;
const STATE_RANK: Record<NodeState, number> = { cut: 4, unreached: 3, stopped: 2, reached: 1, frozen: 0 };

/** The rows of a step, collapsed by name prefix when there are too many to draw. */
export function moduleNodes(step: GraphStep, maxRows: number = MAX_ROWS): Node[] {
    const all: Node[] = step.nodes.map((n) => ({
        name: n.name, params: n.count, atLeast: !!n.at_least, state: n.state, cut: [...n.cuts], heldBy: [...n.held_by],
        optimized: n.optimized, findings: [...n.findings],
    })).sort((a, b) => a.name.localeCompare(b.name));
    return collapse(all, maxRows);
}

function collapse(nodes: Node[], maxRows: number): Node[] {
    if (nodes.length <= maxRows) {
        return nodes;
    }
    // the deepest prefix length that still fits; depth 1 always does what it can
    const maxDepth = Math.max(...nodes.map((n) => n.name.split(".").length));
    let best = groupBy(nodes, 1);
    for (let depth = 2; depth < maxDepth; depth++) {
        const grouped = groupBy(nodes, depth);
        if (grouped.length > maxRows) {
            break;
        }
        best = grouped;
    }
    return best;
}

function groupBy(nodes: Node[], depth: number): Node[] {
    const groups = new Map<string, Node[]>();
    for (const n of nodes) {
        const parts = n.name.split(".");
        const key = parts.length > depth ? parts.slice(0, depth).join(".") + ".*" : n.name;
        const list = groups.get(key) ?? [];
        list.push(n);
        groups.set(key, list);
    }
    return [...groups.entries()].map(([name, members]) => {
        if (members.length === 1) {
            return members[0];
        }
        const worst = members.reduce((a, b) => (STATE_RANK[b.state] > STATE_RANK[a.state] ? b : a));
        return {
            name: `${name} (${members.length} modules)`,
            params: members.reduce((s, m) => s + m.params, 0),
            atLeast: members.some((m) => m.atLeast),
            state: worst.state,
            cut: [...new Set(members.flatMap((m) => m.cut))].sort(),
            heldBy: [...new Set(members.flatMap((m) => m.heldBy))].sort((a, b) => a - b),
            optimized: members.every((m) => m.optimized || m.state !== "reached"),
            findings: [...new Set(members.flatMap((m) => m.findings))].sort(),
        };
    });
}

export function escapeXml(text: string): string {
    return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");
}

function plural(n: number, word: string): string {
    return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** A node's parameter count; "≥" when it is a lower bound. */
function counted(n: Node, word: string): string {
    return `${n.atLeast ? "≥" : ""}${plural(n.params, word)}`;
}

/** lineLabel in the step's own file, "model.py:284" in another: a location carries its file. */
export function where(part: { line: number; path?: string } & InCell, here: string): string {
    return part.path && part.path !== here ? `${part.path.split(/[\\/]/).pop()}:${part.line}` : lineLabel(part);
}

/** A click shows the line in the editor: only for the graph's own file (another file's line is named, not jumped to). */
function lineAttr(path: string | undefined, line: number, here: string): string {
    return path && path !== here ? "" : ` data-line="${line}"`;
}

function clip(text: string, chars: number): string {
    return text.length <= chars ? text : text.slice(0, chars - 1) + "…";
}

const ROW = 44;
const COL_MOD = 8, W_MOD = 260;
const COL_LOSS = 318, W_LOSS = 160;
const COL_OPT = 528, W_OPT = 240;
/** The diagram's natural width: it is drawn at most this wide, scaled down to fit a narrower view. */
export const WIDTH = COL_OPT + W_OPT + 12;
/** Below this the view scrolls instead of shrinking the text further. */
export const MIN_WIDTH = 480;

const STATE_TEXT: Record<NodeState, string> = {
    reached: "gradient reaches the loss",
    cut: "a defect: gradient cut on the way to this loss",
    stopped: "a valid stop-gradient: another loss trains it",
    frozen: "frozen",
    unreached: "held by an optimizer, not reached by this loss",
};

function nodeDetail(n: Node): string {
    switch (n.state) {
        case "cut":
            return n.cut.length ? `cut by ${n.cut[0]}` : "cut off from the loss";
        case "stopped":
            return n.cut.length ? `stop-gradient ${n.cut[0].split(" (")[0]} (valid)` : "stop-gradient (valid)";
        case "reached":
            return n.optimized ? "reaches the loss" : "reaches the loss, in no optimizer";
        case "unreached":
            return "held by an optimizer, not reached";
        default:
            return STATE_TEXT[n.state];
    }
}

function badges(codes: string[], x: number, y: number, findings: GraphFinding[]): string {
    let right = x;
    const out: string[] = [];
    for (const code of [...codes].reverse()) {
        const f = findings.find((g) => g.code === code);
        const w = 8 + code.length * 7;
        right -= w;
        const cls = f && f.confidence === "suspicious" ? "badge suspicious" : "badge";
        out.push(`<g class="${cls}" data-line="${f ? f.line : 0}"><title>${escapeXml(f ? `${f.code} ${f.name} (${lineLabel(f)}): ${f.message}` : code)}</title>`
            + `<rect x="${right}" y="${y}" width="${w}" height="15" rx="7"/><text x="${right + w / 2}" y="${y + 11}" text-anchor="middle">${escapeXml(code)}</text></g>`);
        right -= 4;
    }
    return out.join("");
}

/** One step as an SVG diagram. Clickable parts carry `data-line` (1-based). */
export function stepSvg(step: GraphStep, index: number): string {
    const nodes = moduleNodes(step);
    const optRows = step.optimizers.map((o) => 1 + Math.max(1, o.groups.length) * 0.5);
    const optHeight = optRows.reduce((s, r) => s + r * ROW, 0) + Math.max(0, step.optimizers.length - 1) * 12;
    const height = Math.max(nodes.length * ROW, optHeight, 2 * ROW + 24 * stepFindings(step).length) + 40;
    const lossY = height / 2 - 30;
    const parts: string[] = [];
    parts.push(`<svg class="graph" role="img" aria-label="training step ${index + 1}" viewBox="0 0 ${WIDTH} ${height}" width="${WIDTH}" height="${height}" preserveAspectRatio="xMinYMin meet" xmlns="http://www.w3.org/2000/svg">`);
    parts.push(`<defs><marker id="arrow${index}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" class="arrowhead"/></marker></defs>`);

    // optimizers (right column) first, so module edges can point at them
    const optCenters: number[] = [];
    let y = 20;
    step.optimizers.forEach((o, i) => {
        const h = optRows[i] * ROW;
        optCenters.push(y + 22);
        const cls = o.stepped ? "opt" : "opt unstepped";
        parts.push(`<g class="${cls}"${lineAttr(o.path, o.line, step.path)} tabindex="0"><title>${escapeXml(`${o.name} = ${o.type}(...) at ${where(o, step.path)}`)}</title>`);
        parts.push(`<rect x="${COL_OPT}" y="${y}" width="${W_OPT}" height="${h - 8}" rx="6"/>`);
        parts.push(`<text x="${COL_OPT + 10}" y="${y + 20}" class="title">${escapeXml(clip(`${o.name}: ${o.type}`, 22))}</text>`);
        parts.push(`<text x="${COL_OPT + W_OPT - 10}" y="${y + 20}" class="note" text-anchor="end">${o.stepped ? "step() ✓" : "not stepped here"}</text>`);
        o.groups.forEach((g, gi) => {
            const opts = g.options.length ? ` (${g.options.join(", ")})` : "";
            parts.push(`<text x="${COL_OPT + 10}" y="${y + 40 + gi * 22}" class="sub">${escapeXml(clip(`group ${gi + 1}: ${plural(g.count, "param")}${g.exact ? "" : "+"}${opts}`, 34))}</text>`);
        });
        parts.push(`</g>`);
        y += h + 12;
    });

    // the loss (middle), with the findings that concern the step rather than a module
    parts.push(`<g class="loss" data-line="${step.line}" tabindex="0"><title>${escapeXml(`${step.loss}.backward() at ${lineLabel(step)}`)}</title>`);
    parts.push(`<rect x="${COL_LOSS}" y="${lossY}" width="${W_LOSS}" height="60" rx="30"/>`);
    parts.push(`<text x="${COL_LOSS + W_LOSS / 2}" y="${lossY + 26}" text-anchor="middle" class="title">${escapeXml(clip(step.loss || "loss", 20))}</text>`);
    parts.push(`<text x="${COL_LOSS + W_LOSS / 2}" y="${lossY + 45}" text-anchor="middle" class="sub">backward() · ${escapeXml(lineLabel(step))}</text>`);
    parts.push(`</g>`);
    stepFindings(step).forEach((f, i) => {
        parts.push(badges([f.code], COL_LOSS + W_LOSS / 2 + 24, lossY + 70 + i * 20, step.findings));
    });

    // modules (left) with their edges
    nodes.forEach((n, i) => {
        const top = 20 + i * ROW;
        const mid = top + 17;
        const from = COL_MOD + W_MOD;
        const curve = `M ${from} ${mid} C ${from + 40} ${mid}, ${COL_LOSS - 40} ${lossY + 30}, ${COL_LOSS} ${lossY + 30}`;
        const mx = (from + COL_LOSS) / 2;
        const my = (mid + lossY + 30) / 2;
        if (n.state === "reached") {
            parts.push(`<path class="edge reached" d="${curve}" marker-end="url(#arrow${index})"/>`);
        } else if (n.state === "cut") {
            parts.push(`<path class="edge cut" d="${curve}"/>`);
            parts.push(`<text x="${mx}" y="${my - 4}" text-anchor="middle" class="cutmark">✂</text>`);
        } else if (n.state === "stopped") {
            parts.push(`<path class="edge stopped" d="${curve}"/>`);
            parts.push(`<text x="${mx}" y="${my - 2}" text-anchor="middle" class="stopmark">⊘</text>`);
        }
        for (const oi of n.heldBy) {
            if (optCenters[oi] !== undefined) {
                parts.push(`<path class="edge holds" d="M ${COL_OPT} ${optCenters[oi]} C ${COL_OPT - 100} ${optCenters[oi]}, ${from + 100} ${mid}, ${from} ${mid}"/>`);
            }
        }
        const why = n.cut.length ? ` · ${n.cut.join("; ")}` : "";
        const lost = n.state === "reached" && !n.optimized ? " unoptimized" : "";
        const finding = n.findings.length ? ` · findings: ${n.findings.join(", ")}` : "";
        parts.push(`<g class="module ${n.state}${lost}"><title>${escapeXml(`${n.name}: ${counted(n, "parameter")} · ${STATE_TEXT[n.state]}${lost ? " · in no optimizer stepped for this loss" : ""}${why}${finding}`)}</title>`);
        parts.push(`<rect x="${COL_MOD}" y="${top}" width="${W_MOD}" height="34" rx="4"/>`);
        const room = n.findings.length ? 34 - 7 * n.findings.length : 36;
        parts.push(`<text x="${COL_MOD + 10}" y="${top + 15}" class="name">${escapeXml(clip(n.name, Math.max(12, room)))}</text>`);
        parts.push(`<text x="${COL_MOD + 10}" y="${top + 29}" class="sub">${escapeXml(clip(`${counted(n, "param")} · ${nodeDetail(n)}`, 46))}</text>`);
        parts.push(`</g>`);
        if (n.findings.length) {
            parts.push(badges(n.findings, COL_MOD + W_MOD - 6, top + 4, step.findings));
        }
    });
    parts.push(`</svg>`);
    return parts.join("");
}

/** Findings of a step that are on no module (an in-place change, a missing step, ...). */
function stepFindings(step: GraphStep): GraphFinding[] {
    return step.findings.filter((f) => f.on === "step");
}

function eventsHtml(step: GraphStep): string {
    if (!step.events.length) {
        return "";
    }
    const chips = step.events.map((e) => {
        const label = e.label || `${e.target ? `${e.target}.` : ""}${e.kind}()`;
        const codes = e.findings ?? [];
        const found = codes.map((c) => ` <span class="code">${escapeXml(c)}</span>`).join("");
        return `<button class="event ${escapeXml(e.kind)}${codes.length ? " flagged" : ""}"${lineAttr(e.path, e.line, step.path)}>${escapeXml(label)} <span class="line">${escapeXml(where(e, step.path))}</span>${found}</button>`;
    });
    return `<div class="events" aria-label="one iteration">${chips.join('<span class="then">→</span>')}</div>`;
}

function findingsHtml(findings: GraphFinding[], title: string): string {
    if (!findings.length) {
        return "";
    }
    const rows = findings.map((f) => `<li class="finding ${escapeXml(f.confidence)}" data-line="${f.line}"><span class="code">${escapeXml(f.code)}</span> `
        + `<span class="where">${escapeXml(lineLabel(f))}</span> ${escapeXml(f.message)}${f.nodes.length ? ` <span class="on">(${escapeXml(f.nodes.join(", "))})</span>` : ""}</li>`);
    return `<div class="findings"><h3>${escapeXml(title)}</h3><ul>${rows.join("")}</ul></div>`;
}

function legendHtml(): string {
    return `<div class="legend"><span class="key reached">reaches the loss</span><span class="key cut">cut: a defect</span>`
        + `<span class="key stopped">stop-gradient: valid</span><span class="key unreached">held by an optimizer, not reached</span>`
        + `<span class="key frozen">frozen</span><span class="key holds">optimizer holds</span><span class="key finding">finding</span></div>`;
}

export interface PageOptions { nonce: string; cspSource: string; title: string }

/** The whole webview page. Everything from the graph is escaped; the only script is ours (nonce). */
export function graphHtml(graph: TrainingGraph, opts: PageOptions): string {
    const body: string[] = [];
    body.push(`<h1>${escapeXml(opts.title)}</h1>`);
    if (graph.error) {
        body.push(`<p class="empty">${escapeXml(graph.error)}</p>`);
    } else if (!graph.steps.length) {
        body.push(`<p class="empty">No training step in this file: gradaudit draws a graph for each <code>backward()</code> (or <code>torch.autograd.grad</code>) it can follow from here.</p>`);
    } else {
        body.push(legendHtml());
        graph.steps.forEach((step, i) => {
            const focus = graph.focus === step.line ? " focus" : "";
            const where = !step.function ? "" : step.function === "<module>" ? " at module level" : ` in <code>${escapeXml(step.function)}</code>`;
            const live = step.nodes.filter((n) => n.state === "reached" || n.state === "frozen");
            const reached = live.reduce((s, n) => s + n.count, 0);
            body.push(`<section class="step${focus}" id="step-${i + 1}">`);
            body.push(`<h2><a href="#" data-line="${step.line}"><code>${escapeXml(step.loss || "loss")}.backward()</code></a>${where} · ${escapeXml(lineLabel(step))}</h2>`);
            const found = step.findings.length ? ` ${plural(step.findings.length, "finding")}.` : " No finding.";
            body.push(`<p class="summary">${escapeXml(`${plural(reached, "parameter")} in ${plural(live.length, "module")} reach the loss; ${plural(step.optimizers.length, "optimizer")}.${found}`)}</p>`);
            if (step.unknown) {
                body.push(`<p class="warn">Part of the loss comes from calls gradaudit cannot follow: the graph may miss modules.</p>`);
            }
            body.push(`<div class="diagram">${stepSvg(step, i)}</div>`);
            body.push(eventsHtml(step));
            body.push(findingsHtml(step.findings, "Findings of this step"));
            body.push(`</section>`);
        });
    }
    if (!graph.error && graph.findings && graph.findings.length) {
        body.push(findingsHtml(graph.findings, "Other findings in this file"));
    }
    const csp = `default-src 'none'; style-src ${opts.cspSource} 'nonce-${opts.nonce}'; script-src 'nonce-${opts.nonce}';`;
    return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>${escapeXml(opts.title)}</title>
<style nonce="${opts.nonce}">${STYLE}</style></head>
<body>${body.join("\n")}
<script nonce="${opts.nonce}">${SCRIPT}</script></body></html>`;
}

const STYLE = `
body { font-family: var(--vscode-font-family); color: var(--vscode-foreground); padding: 0 16px 24px; }
h1 { font-size: 1.3em; font-weight: 600; } h2 { font-size: 1.1em; font-weight: 600; margin-bottom: 4px; }
h2 a { color: var(--vscode-textLink-foreground); text-decoration: none; } h3 { font-size: 1em; font-weight: 600; margin: 8px 0 4px; }
.summary { margin: 0 0 8px; opacity: .85; } .warn { color: var(--vscode-editorWarning-foreground); }
.step { border-top: 1px solid var(--vscode-panel-border, #8884); padding-top: 8px; margin-top: 12px; }
.step.focus h2::after { content: " ◀"; color: var(--vscode-textLink-foreground); }
.diagram { overflow-x: auto; width: 100%; padding-bottom: 4px; }
.diagram::-webkit-scrollbar { height: 10px; } .diagram::-webkit-scrollbar-thumb { background: var(--vscode-scrollbarSlider-activeBackground, #8888); border-radius: 5px; }
svg.graph { display: block; width: 100%; max-width: ${WIDTH}px; min-width: ${MIN_WIDTH}px; height: auto; font-size: 12px; }
svg text { fill: var(--vscode-foreground); } svg .title { font-weight: 600; font-size: 13px; } svg .sub, svg .note { opacity: .8; font-size: 11px; }
svg .name { font-family: var(--vscode-editor-font-family); }
svg rect { fill: var(--vscode-editorWidget-background, #2224); stroke-width: 1.5; }
.module.reached rect { stroke: var(--vscode-testing-iconPassed, #3fb950); }
.module.reached.unoptimized rect { stroke: var(--vscode-errorForeground, #f14c4c); stroke-width: 2; }
.module.cut rect { stroke: var(--vscode-errorForeground, #f14c4c); stroke-dasharray: 5 3; stroke-width: 2; }
.module.stopped rect { stroke: var(--vscode-charts-purple, #b180d7); stroke-dasharray: 1 3; }
.module.stopped text { opacity: .85; }
.module.unreached rect { stroke: var(--vscode-editorWarning-foreground, #cca700); stroke-dasharray: 2 3; }
.module.frozen rect { stroke: var(--vscode-disabledForeground, #888); } .module.frozen text { opacity: .6; }
.loss rect { stroke: var(--vscode-textLink-foreground, #3794ff); stroke-width: 2; }
.opt rect { stroke: var(--vscode-charts-blue, #3794ff); } .opt.unstepped rect { stroke-dasharray: 4 3; }
.edge { fill: none; stroke-width: 1.5; } .edge.reached { stroke: var(--vscode-testing-iconPassed, #3fb950); }
.edge.cut { stroke: var(--vscode-errorForeground, #f14c4c); stroke-dasharray: 5 4; } .cutmark { fill: var(--vscode-errorForeground, #f14c4c); font-size: 16px; }
.edge.stopped { stroke: var(--vscode-charts-purple, #b180d7); stroke-dasharray: 1 4; opacity: .8; } .stopmark { fill: var(--vscode-charts-purple, #b180d7); font-size: 14px; }
.edge.holds { stroke: var(--vscode-charts-blue, #3794ff); opacity: .45; stroke-width: 1; }
.arrowhead { fill: var(--vscode-testing-iconPassed, #3fb950); }
.badge rect { fill: var(--vscode-errorForeground, #f14c4c); stroke: none; } .badge text { fill: #fff; font-size: 10px; font-weight: 600; }
.badge.suspicious rect { fill: var(--vscode-editorWarning-foreground, #cca700); } .badge.suspicious text { fill: #000; }
[data-line] { cursor: pointer; }
.events { display: flex; flex-wrap: wrap; align-items: center; gap: 6px; margin: 8px 0; }
.event { font-family: var(--vscode-editor-font-family); background: var(--vscode-button-secondaryBackground); color: var(--vscode-button-secondaryForeground); border: 0; border-radius: 10px; padding: 3px 10px; cursor: pointer; }
.event.backward { background: var(--vscode-button-background); color: var(--vscode-button-foreground); }
.event .line { opacity: .7; font-size: .85em; } .then { opacity: .7; }
.event.flagged { outline: 2px solid var(--vscode-errorForeground, #f14c4c); } .event .code { font-weight: 600; color: var(--vscode-errorForeground, #f14c4c); }
.findings ul { list-style: none; padding: 0; margin: 0; } .finding { padding: 2px 0; }
.finding .code { font-weight: 600; color: var(--vscode-errorForeground, #f14c4c); } .finding.suspicious .code { color: var(--vscode-editorWarning-foreground, #cca700); }
.finding .where, .finding .on { opacity: .75; }
.legend { display: flex; gap: 14px; flex-wrap: wrap; font-size: .9em; margin-bottom: 8px; }
.key::before { content: ""; display: inline-block; width: 14px; height: 0; border-top: 2px solid; margin-right: 5px; vertical-align: middle; }
.key.reached::before { border-color: var(--vscode-testing-iconPassed, #3fb950); } .key.cut::before { border-top-style: dashed; border-color: var(--vscode-errorForeground, #f14c4c); }
.key.stopped::before { border-top-style: dotted; border-color: var(--vscode-charts-purple, #b180d7); }
.key.unreached::before { border-top-style: dotted; border-color: var(--vscode-editorWarning-foreground, #cca700); } .key.frozen::before { border-color: var(--vscode-disabledForeground, #888); }
.key.holds::before { border-color: var(--vscode-charts-blue, #3794ff); }
.key.finding::before { width: 10px; height: 10px; border: 0; border-radius: 5px; background: var(--vscode-errorForeground, #f14c4c); }
.empty { opacity: .8; }
`;

// Clicking a node, an event or a heading shows that line in the editor.
const SCRIPT = `
const vscode = acquireVsCodeApi();
document.addEventListener('click', (ev) => {
  const el = ev.target instanceof Element ? ev.target.closest('[data-line]') : null;
  if (el) { ev.preventDefault(); vscode.postMessage({ type: 'reveal', line: Number(el.getAttribute('data-line')) }); }
});
const focus = document.querySelector('.step.focus'); if (focus) { focus.scrollIntoView(); }
`;
