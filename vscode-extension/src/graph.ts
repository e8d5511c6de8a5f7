// The training-step graph (the server's `gradaudit.showTrainingGraph` result) drawn as an SVG
// diagram for a webview: modules on the left, the loss in the middle, optimizers on the right.
// Pure: no `vscode` import; the unit tests render real server output.

export interface GraphModule { name: string; params: string[]; frozen: boolean; cut: string[] }
export interface GraphGroup { params: string[]; options: string[]; modules: string[] }
export interface GraphOptimizer { name: string; type: string; line: number; stepped: boolean; groups: GraphGroup[] }
export interface GraphEvent { kind: string; line: number; path: string; target?: string }
export interface GraphStep {
    loss: string; function: string; line: number; path: string;
    modules: GraphModule[]; cut_only: { name: string; cut: string[] }[];
    optimizers: GraphOptimizer[]; events: GraphEvent[]; unknown: boolean; owner: string;
}
export interface TrainingGraph { path?: string; uri?: string; steps: GraphStep[]; focus?: number; error?: string }

/** How a module takes part in a step. */
export type ModuleState = "reached" | "cut" | "frozen" | "unreached";

export interface Node {
    name: string;
    params: number;
    state: ModuleState;
    cut: string[];
    /** Optimizers (by index) holding parameters of this module. */
    heldBy: number[];
}

const MAX_ROWS = 24;
const STATE_RANK: Record<ModuleState, number> = { cut: 3, unreached: 2, reached: 1, frozen: 0 };

/** The module nodes of a step, collapsed by name prefix when there are too many to draw. */
export function moduleNodes(step: GraphStep, maxRows: number = MAX_ROWS): Node[] {
    const nodes = new Map<string, Node>();
    const get = (name: string): Node => {
        let n = nodes.get(name);
        if (n === undefined) {
            n = { name, params: 0, state: "unreached", cut: [], heldBy: [] };
            nodes.set(name, n);
        }
        return n;
    };
    for (const m of step.modules) {
        const n = get(m.name);
        n.params = m.params.length;
        n.state = m.frozen ? "frozen" : "reached";
        n.cut = [...m.cut];
    }
    for (const c of step.cut_only) {
        const n = get(c.name);
        n.state = "cut";
        n.cut = [...c.cut];
    }
    step.optimizers.forEach((opt, i) => {
        for (const g of opt.groups) {
            for (const m of g.modules) {
                const known = nodes.has(m);
                const n = get(m);
                if (!known) {
                    n.params = g.params.filter((p) => p === m || p.startsWith(m + ".")).length;
                }
                if (!n.heldBy.includes(i)) {
                    n.heldBy.push(i);
                }
            }
        }
    });
    const all = [...nodes.values()].sort((a, b) => a.name.localeCompare(b.name));
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
            state: worst.state,
            cut: [...new Set(members.flatMap((m) => m.cut))].sort(),
            heldBy: [...new Set(members.flatMap((m) => m.heldBy))].sort((a, b) => a - b),
        };
    });
}

export function escapeXml(text: string): string {
    return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");
}

function plural(n: number, word: string): string {
    return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function clip(text: string, chars: number): string {
    return text.length <= chars ? text : text.slice(0, chars - 1) + "…";
}

const ROW = 44;
const COL_MOD = 8, W_MOD = 250;
const COL_LOSS = 330, W_LOSS = 170;
const COL_OPT = 570, W_OPT = 250;
const WIDTH = COL_OPT + W_OPT + 16;

const STATE_TEXT: Record<ModuleState, string> = {
    reached: "gradient reaches the loss",
    cut: "cut: no gradient from this loss",
    frozen: "frozen",
    unreached: "not reached by this loss",
};

/** One step as an SVG diagram. Clickable parts carry `data-line` (1-based). */
export function stepSvg(step: GraphStep, index: number): string {
    const nodes = moduleNodes(step);
    const optRows = step.optimizers.map((o) => 1 + Math.max(1, o.groups.length) * 0.5);
    const optHeight = optRows.reduce((s, r) => s + r * ROW, 0) + Math.max(0, step.optimizers.length - 1) * 12;
    const height = Math.max(nodes.length * ROW, optHeight, 2 * ROW) + 40;
    const lossY = height / 2 - 30;
    const parts: string[] = [];
    parts.push(`<svg class="graph" role="img" aria-label="training step ${index + 1}" viewBox="0 0 ${WIDTH} ${height}" width="${WIDTH}" height="${height}" xmlns="http://www.w3.org/2000/svg">`);
    parts.push(`<defs><marker id="arrow${index}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" class="arrowhead"/></marker></defs>`);

    // optimizers (right column) first, so module edges can point at them
    const optCenters: number[] = [];
    let y = 20;
    step.optimizers.forEach((o, i) => {
        const h = optRows[i] * ROW;
        optCenters.push(y + 22);
        const cls = o.stepped ? "opt" : "opt unstepped";
        parts.push(`<g class="${cls}" data-line="${o.line}" tabindex="0"><title>${escapeXml(`${o.name} = ${o.type}(...) at line ${o.line}`)}</title>`);
        parts.push(`<rect x="${COL_OPT}" y="${y}" width="${W_OPT}" height="${h - 8}" rx="6"/>`);
        parts.push(`<text x="${COL_OPT + 10}" y="${y + 20}" class="title">${escapeXml(clip(`${o.name}: ${o.type}`, 26))}</text>`);
        parts.push(`<text x="${COL_OPT + W_OPT - 10}" y="${y + 20}" class="note" text-anchor="end">${o.stepped ? "step() ✓" : "not stepped here"}</text>`);
        o.groups.forEach((g, gi) => {
            const opts = g.options.length ? ` (${g.options.join(", ")})` : "";
            parts.push(`<text x="${COL_OPT + 10}" y="${y + 40 + gi * 22}" class="sub">${escapeXml(clip(`group ${gi + 1}: ${plural(g.params.length, "param")}${opts}`, 36))}</text>`);
        });
        parts.push(`</g>`);
        y += h + 12;
    });

    // the loss (middle)
    parts.push(`<g class="loss" data-line="${step.line}" tabindex="0"><title>${escapeXml(`${step.loss}.backward() at line ${step.line}`)}</title>`);
    parts.push(`<rect x="${COL_LOSS}" y="${lossY}" width="${W_LOSS}" height="60" rx="30"/>`);
    parts.push(`<text x="${COL_LOSS + W_LOSS / 2}" y="${lossY + 26}" text-anchor="middle" class="title">${escapeXml(clip(step.loss || "loss", 22))}</text>`);
    parts.push(`<text x="${COL_LOSS + W_LOSS / 2}" y="${lossY + 45}" text-anchor="middle" class="sub">backward() · line ${step.line}</text>`);
    parts.push(`</g>`);

    // modules (left) with their edges
    nodes.forEach((n, i) => {
        const top = 20 + i * ROW;
        const mid = top + 17;
        if (n.state === "reached") {
            parts.push(`<path class="edge reached" d="M ${COL_MOD + W_MOD} ${mid} C ${COL_MOD + W_MOD + 60} ${mid}, ${COL_LOSS - 60} ${lossY + 30}, ${COL_LOSS} ${lossY + 30}" marker-end="url(#arrow${index})"/>`);
        } else if (n.state === "cut") {
            const mx = (COL_MOD + W_MOD + COL_LOSS) / 2;
            parts.push(`<path class="edge cut" d="M ${COL_MOD + W_MOD} ${mid} C ${COL_MOD + W_MOD + 60} ${mid}, ${COL_LOSS - 60} ${lossY + 30}, ${COL_LOSS} ${lossY + 30}"/>`);
            parts.push(`<text x="${mx}" y="${(mid + lossY + 30) / 2 - 4}" text-anchor="middle" class="cutmark">✂</text>`);
        }
        for (const oi of n.heldBy) {
            parts.push(`<path class="edge holds" d="M ${COL_OPT} ${optCenters[oi]} C ${COL_OPT - 120} ${optCenters[oi]}, ${COL_MOD + W_MOD + 120} ${mid}, ${COL_MOD + W_MOD} ${mid}"/>`);
        }
        const why = n.cut.length ? ` · ${n.cut.join("; ")}` : "";
        parts.push(`<g class="module ${n.state}"><title>${escapeXml(`${n.name}: ${plural(n.params, "parameter")} · ${STATE_TEXT[n.state]}${why}`)}</title>`);
        parts.push(`<rect x="${COL_MOD}" y="${top}" width="${W_MOD}" height="34" rx="4"/>`);
        parts.push(`<text x="${COL_MOD + 10}" y="${top + 15}" class="name">${escapeXml(clip(n.name, 34))}</text>`);
        const detail = n.state === "cut" && n.cut.length ? `cut by ${n.cut[0]}` : STATE_TEXT[n.state];
        parts.push(`<text x="${COL_MOD + 10}" y="${top + 29}" class="sub">${escapeXml(clip(`${plural(n.params, "param")} · ${detail}`, 40))}</text>`);
        parts.push(`</g>`);
    });
    parts.push(`</svg>`);
    return parts.join("");
}

function eventsHtml(step: GraphStep): string {
    if (!step.events.length) {
        return "";
    }
    const chips = step.events.map((e) => {
        const target = e.target ? `${e.target}.` : "";
        return `<button class="event ${escapeXml(e.kind)}" data-line="${e.line}">${escapeXml(`${target}${e.kind}()`)} <span class="line">line ${e.line}</span></button>`;
    });
    return `<div class="events" aria-label="one iteration">${chips.join('<span class="then">→</span>')}</div>`;
}

function legendHtml(): string {
    return `<div class="legend"><span class="key reached">reaches the loss</span><span class="key cut">gradient cut</span>`
        + `<span class="key unreached">held by an optimizer, not reached</span><span class="key frozen">frozen</span><span class="key holds">optimizer holds</span></div>`;
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
            const reached = step.modules.reduce((s, m) => s + m.params.length, 0);
            body.push(`<section class="step${focus}" id="step-${i + 1}">`);
            body.push(`<h2><a href="#" data-line="${step.line}"><code>${escapeXml(step.loss || "loss")}.backward()</code></a>${where} · line ${step.line}</h2>`);
            body.push(`<p class="summary">${escapeXml(`${plural(reached, "parameter")} in ${plural(step.modules.length, "module")} reach the loss; ${plural(step.optimizers.length, "optimizer")}.`)}</p>`);
            if (step.unknown) {
                body.push(`<p class="warn">Part of the loss comes from calls gradaudit cannot follow: the graph may miss modules.</p>`);
            }
            body.push(`<div class="diagram">${stepSvg(step, i)}</div>`);
            body.push(eventsHtml(step));
            body.push(`</section>`);
        });
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
h2 a { color: var(--vscode-textLink-foreground); text-decoration: none; }
.summary { margin: 0 0 8px; opacity: .85; } .warn { color: var(--vscode-editorWarning-foreground); }
.step { border-top: 1px solid var(--vscode-panel-border, #8884); padding-top: 8px; margin-top: 12px; }
.step.focus h2::after { content: " ◀"; color: var(--vscode-textLink-foreground); }
.diagram { overflow-x: auto; } svg.graph { font-size: 12px; }
svg text { fill: var(--vscode-foreground); } svg .title { font-weight: 600; font-size: 13px; } svg .sub, svg .note { opacity: .8; font-size: 11px; }
svg .name { font-family: var(--vscode-editor-font-family); }
svg rect { fill: var(--vscode-editorWidget-background, #2224); stroke-width: 1.5; }
.module.reached rect { stroke: var(--vscode-testing-iconPassed, #3fb950); }
.module.cut rect { stroke: var(--vscode-errorForeground, #f14c4c); stroke-dasharray: 5 3; }
.module.unreached rect { stroke: var(--vscode-editorWarning-foreground, #cca700); stroke-dasharray: 2 3; }
.module.frozen rect { stroke: var(--vscode-disabledForeground, #888); } .module.frozen text { opacity: .6; }
.loss rect { stroke: var(--vscode-textLink-foreground, #3794ff); stroke-width: 2; }
.opt rect { stroke: var(--vscode-charts-blue, #3794ff); } .opt.unstepped rect { stroke-dasharray: 4 3; }
.edge { fill: none; stroke-width: 1.5; } .edge.reached { stroke: var(--vscode-testing-iconPassed, #3fb950); }
.edge.cut { stroke: var(--vscode-errorForeground, #f14c4c); stroke-dasharray: 5 4; } .cutmark { fill: var(--vscode-errorForeground, #f14c4c); font-size: 16px; }
.edge.holds { stroke: var(--vscode-charts-blue, #3794ff); opacity: .45; stroke-width: 1; }
.arrowhead { fill: var(--vscode-testing-iconPassed, #3fb950); }
[data-line] { cursor: pointer; }
.events { display: flex; flex-wrap: wrap; align-items: center; gap: 6px; margin: 8px 0; }
.event { font-family: var(--vscode-editor-font-family); background: var(--vscode-button-secondaryBackground); color: var(--vscode-button-secondaryForeground); border: 0; border-radius: 10px; padding: 3px 10px; cursor: pointer; }
.event.backward { background: var(--vscode-button-background); color: var(--vscode-button-foreground); }
.event .line { opacity: .7; font-size: .85em; } .then { opacity: .7; }
.legend { display: flex; gap: 14px; flex-wrap: wrap; font-size: .9em; margin-bottom: 8px; }
.key::before { content: ""; display: inline-block; width: 14px; height: 0; border-top: 2px solid; margin-right: 5px; vertical-align: middle; }
.key.reached::before { border-color: var(--vscode-testing-iconPassed, #3fb950); } .key.cut::before { border-top-style: dashed; border-color: var(--vscode-errorForeground, #f14c4c); }
.key.unreached::before { border-top-style: dotted; border-color: var(--vscode-editorWarning-foreground, #cca700); } .key.frozen::before { border-color: var(--vscode-disabledForeground, #888); }
.key.holds::before { border-color: var(--vscode-charts-blue, #3794ff); }
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
