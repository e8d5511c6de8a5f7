"""A training step drawn as inline SVG (the HTML report: no script, no network).

Same picture as the Mermaid flowchart, laid out here in five columns: the batch, the modules,
the loss, `backward()`, the optimizers stepped for it. A cut that breaks training is a red dashed
edge ending in an x; a deliberate stop-gradient checked as valid is a grey dashed edge ending in
a bar. Their labels sit in the gap between the module column and the loss, which is widened to
hold them, beside the module they leave: a label never covers a node. An optimizer's "updates"
edges run along a channel under the nodes to the modules it holds.
"""

from __future__ import annotations

from html import escape

from ..source.prebuilt import dataclass
from .graph import StepGraph

CHAR_W, LINE_H, PAD, GAP_X, GAP_Y = 7.2, 16, 10, 56, 14
LABEL_W, LABEL_H, LABEL_GAP = 6.6, 13, 10  # a cut's label: 11px text; its distance from nodes and edge
BREAK, STOP = "#c62828", "#607d8b"
_WIDTH = {"cut": 2, "stop": 1.6}  # an edge's stroke width by its end marker (arrows: 1.3)
FILL = {
    "frozen": ("#e3f2fd", "#1565c0", "4 3"),
    "unoptimized": ("#ffebee", "#c62828", ""),
    "copy": ("#f5f5f5", "#9e9e9e", ""),
    "": ("#ffffff", "#37474f", ""),
}


class _Node:
    def __init__(self, key, lines, kind="", shape="rect"):
        self.key, self.lines, self.kind, self.shape = key, lines, kind, shape
        self.w = max(len(t) for t in lines) * CHAR_W + 2 * PAD
        self.h = len(lines) * LINE_H + 2 * PAD - 4
        self.x = self.y = 0.0

    def right(self):
        return self.x + self.w, self.y + self.h / 2

    def left(self):
        return self.x, self.y + self.h / 2

    def bottom(self):
        return self.x + self.w / 2, self.y + self.h


def _column(nodes, x, top):
    y = top
    for n in nodes:
        n.x, n.y = x, y
        y += n.h + GAP_Y
    return y - GAP_Y


@dataclass(frozen=True)
class Label:
    """A cut's label and its box (x, y: top left)."""

    text: str
    x: float
    y: float
    w: float
    h: float
    valid: bool


@dataclass
class Layout:
    nodes: list  # every _Node
    inputs: _Node
    mods: list  # (_Node, ModuleNode)
    opts: list  # (_Node, OptimizerNode) of the optimizers stepped
    loss: _Node
    bw: _Node
    labels: list  # Label
    run_end: float  # where the straight runs out of the modules end (0: edges go straight to the loss)
    width: float
    height: float
    channel: float  # the y of the "updated by" channel under the nodes


def _cut_text(c, here: str) -> str:
    where = f"l.{c.line}" if not c.path or c.path == here else f"{c.path}:{c.line}"
    return f"⊣ stop-gradient (valid): {c.detail} {where}" if c.valid else f"✂ cut: {c.detail} {where}"


def layout(g: StepGraph) -> Layout:
    """Where everything is drawn. With cuts, every edge from a module to the loss first runs straight
    out of the module through a band as wide as the widest label, then to the loss; each cut's
    label sits in that band just above its own edge's straight run, so it covers no node and no
    other edge."""
    inputs = _Node(
        "in", [", ".join(g.inputs)] if g.inputs else ([f"loop: {g.source}"] if g.source else ["inputs"]), shape="para"
    )
    mods: list = []
    for m in g.modules:
        lines = [m.name, m.count(short=True)]
        kind = "unoptimized" if m.unoptimized else "frozen" if m.frozen else "copy" if m.note == "copy" else ""
        if kind:
            lines.append({"unoptimized": "not optimized", "frozen": "frozen", "copy": "copy"}[kind])
        mods.append((_Node(f"m{len(mods)}", lines, kind), m))
    loss = _Node("loss", [g.loss or "loss"], shape="round")
    bw = _Node("bw", ["backward()", f"line {g.line}"], shape="hex")
    opts = [(_Node(f"o{i}", [o.name, o.type], shape="double"), o) for i, o in enumerate(g.optimizers) if o.stepped]
    band = max((len(_cut_text(c, g.path)) * LABEL_W for m in g.modules for c in m.cut), default=0.0)
    band = band + 2 * LABEL_GAP if band else 0.0
    columns = [[inputs], [n for n, _ in mods], [loss], [bw], [n for n, _ in opts]]
    gaps = [GAP_X, GAP_X + band, GAP_X, GAP_X, GAP_X]
    x, top = 8.0, 8.0
    heights = []
    for col, gap in zip(columns, gaps):
        if not col:
            continue
        heights.append(_column(col, x, top))
        x += max(n.w for n in col) + gap
    tallest = max(heights) if heights else top
    for col in columns:  # centre short columns against the tallest
        if col:
            h = col[-1].y + col[-1].h - col[0].y
            shift = (tallest - top - h) / 2
            for n in col:
                n.y += shift
    col_right = max((n.x + n.w for n, _ in mods), default=0.0)
    labels = []
    for n, m in mods:
        _, cy = n.right()
        for k, c in enumerate(m.cut):
            text = _cut_text(c, g.path)
            labels.append(
                Label(
                    text, col_right + LABEL_GAP, cy - 4 - LABEL_H * (k + 1), len(text) * LABEL_W, LABEL_H, bool(c.valid)
                )
            )
    nodes = [inputs, loss, bw] + [n for n, _ in mods] + [n for n, _ in opts]
    low = min((lb.y for lb in labels), default=top)
    if low < top:  # labels stacked above the first module: move everything down to show them
        for n in nodes:
            n.y += top - low
        labels = [Label(lb.text, lb.x, lb.y + top - low, lb.w, lb.h, lb.valid) for lb in labels]
        tallest += top - low
    channel = tallest + 22
    return Layout(
        nodes,
        inputs,
        mods,
        opts,
        loss,
        bw,
        labels,
        col_right + band if band else 0.0,
        x - GAP_X + 8,
        channel + 8 * max(len(opts), 1) + 14,
        channel,
    )


def draw(g: StepGraph) -> str:
    lay = layout(g)
    loss, bw = lay.loss, lay.bw
    parts, edges = [], []

    def to_loss(n, color, dash="", end="arrow"):
        (x1, y1), (x2, y2) = n.right(), loss.left()
        if not lay.run_end:
            return _line((x1, y1), (x2, y2), color, dash, end)
        return _path([(x1, y1), (lay.run_end, y1), (x2, y2)], color, dash, end)

    for n, m in lay.mods:
        edges.append(_line(lay.inputs.right(), n.left(), "#90a4ae"))
        if m.reached:
            edges.append(to_loss(n, "#37474f"))
        for c in m.cut:
            edges.append(to_loss(n, STOP, "5 4", "stop") if c.valid else to_loss(n, BREAK, "5 4", "cut"))
    edges.append(_line(loss.right(), bw.left(), "#37474f"))
    col_x = min((n.x for n, _ in lay.mods), default=0.0)
    for k, (o, spec) in enumerate(lay.opts):
        edges.append(_line(bw.right(), o.left(), "#37474f"))
        for n, m in lay.mods:
            if spec.name in m.optimized:
                # under every node, then up the gap left of the module column, into the module's side
                y, lane = lay.channel + 8 * k, col_x - 14 - 6 * k
                (ox, oy), my = o.bottom(), n.y + n.h * 0.78
                edges.append(
                    f'<path d="M{ox:.1f},{oy:.1f} L{ox:.1f},{y:.1f} L{lane:.1f},{y:.1f} L{lane:.1f},{my:.1f} '
                    f'L{n.x - 2:.1f},{my:.1f}" fill="none" stroke="#78909c" stroke-dasharray="2 3" '
                    f'marker-end="url(#arrow-{g.id})"/>'
                )
    for n in lay.nodes:
        parts.append(_node(n))
    for lb in lay.labels:
        parts.append(
            f'<text x="{lb.x:.1f}" y="{lb.y + lb.h - 3:.1f}" text-anchor="start" '
            f'class="{"stop" if lb.valid else "cut"}">{escape(lb.text)}</text>'
        )
    defs = (
        f'<defs><marker id="arrow-{g.id}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
        f'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#455a64"/></marker>'
        f'<marker id="cut-{g.id}" viewBox="0 0 10 10" refX="5" refY="5" markerWidth="9" markerHeight="9">'
        f'<path d="M1,1 L9,9 M9,1 L1,9" stroke="{BREAK}" stroke-width="2"/></marker>'
        f'<marker id="stop-{g.id}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="9" markerHeight="9" '
        f'orient="auto"><path d="M9,0 L9,10" stroke="{STOP}" stroke-width="2.5"/></marker></defs>'
    )
    body = "".join(e.replace("{id}", g.id) for e in edges) + "".join(parts)
    return (
        f'<svg class="graph" role="img" width="{lay.width:.0f}" '
        f'height="{lay.height:.0f}" viewBox="0 0 {lay.width:.0f} {lay.height:.0f}" '
        f'aria-label="training step {escape(g.loss)}.backward() at line {g.line}">{defs}{body}</svg>'
    )


def _path(points, color, dash="", end="arrow") -> str:
    d = f' stroke-dasharray="{dash}"' if dash else ""
    width = _WIDTH.get(end, 1.3)
    (lx, ly) = points[-1]
    pts = [f"{x:.1f},{y:.1f}" for x, y in points[:-1]] + [f"{lx - 2:.1f},{ly:.1f}"]
    return (
        f'<path d="M{" L".join(pts)}" fill="none" stroke="{color}" stroke-width="{width}"{d} '
        f'marker-end="url(#{end}-{{id}})"/>'
    )


def _line(a, b, color, dash="", end="arrow") -> str:
    (x1, y1), (x2, y2) = a, b
    d = f' stroke-dasharray="{dash}"' if dash else ""
    width = _WIDTH.get(end, 1.3)
    return (
        f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2 - 2:.1f}" y2="{y2:.1f}" stroke="{color}" '
        f'stroke-width="{width}"{d} marker-end="url(#{end}-{{id}})"/>'
    )


def _node(n: _Node) -> str:
    fill, stroke, dash = FILL[n.kind]
    d = f' stroke-dasharray="{dash}"' if dash else ""
    x, y, w, h = n.x, n.y, n.w, n.h
    if n.shape == "round":
        shape = f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="{h / 2:.1f}"'
    elif n.shape == "para":
        s = 8
        shape = (
            f'<polygon points="{x + s:.1f},{y:.1f} {x + w:.1f},{y:.1f} {x + w - s:.1f},{y + h:.1f} {x:.1f},{y + h:.1f}"'
        )
    elif n.shape == "hex":
        s = 10
        shape = (
            f'<polygon points="{x + s:.1f},{y:.1f} {x + w - s:.1f},{y:.1f} {x + w:.1f},{y + h / 2:.1f} '
            f'{x + w - s:.1f},{y + h:.1f} {x + s:.1f},{y + h:.1f} {x:.1f},{y + h / 2:.1f}"'
        )
    else:
        shape = f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="3"'
    out = [
        f'<g class="node {n.kind or "plain"}" data-node="{n.key}">{shape} fill="{fill}" stroke="{stroke}"'
        f' stroke-width="{2 if n.kind == "unoptimized" or n.shape == "double" else 1.2}"{d}/>'
    ]
    if n.shape == "double":
        out.append(
            f'<rect x="{x + 4:.1f}" y="{y:.1f}" width="{w - 8:.1f}" height="{h:.1f}" fill="none" '
            f'stroke="{stroke}" stroke-width="1"/>'
        )
    for i, t in enumerate(n.lines):
        ty = y + PAD + LINE_H * i + 10
        cls = ' class="mark"' if i == 2 else ""
        out.append(f'<text x="{x + w / 2:.1f}" y="{ty:.1f}" text-anchor="middle"{cls}>{escape(t)}</text>')
    out.append("</g>")
    return "".join(out)
