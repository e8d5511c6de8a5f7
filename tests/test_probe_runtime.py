"""gradaudit.probe under real torch: it flags an unoptimized head, a frozen encoder, NaN gradients
and a missing zero_grad in small buggy training steps, and passes their fixed forms and the valid
look-alikes (a GAN, accumulation, a frozen backbone with a filtered optimizer)."""

import io

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

from gradaudit.probe import GradFlowError, batch_for, probe  # noqa: E402

pytestmark = [pytest.mark.runtime, pytest.mark.slow]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        return self.head(self.encoder(x))


def batches(n=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(4, 8, generator=g), torch.randint(0, 3, (4,), generator=g)) for _ in range(n)]


def train(model, opt, data, zero_grad=True, loss_fn=None):
    for x, y in data:
        if zero_grad:
            opt.zero_grad()
        out = model(x)
        loss = loss_fn(out, y) if loss_fn else F.cross_entropy(out, y)
        loss.backward()
        opt.step()


def failure(p, **kw) -> str:
    with pytest.raises(GradFlowError) as exc:
        p.assert_flows(**kw)
    return str(exc.value)


def test_unoptimized_head():
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.SGD(model.encoder.parameters(), lr=0.1)  # the head is in no param group
    with probe(model, opt) as p:
        train(model, opt, batches())
    msg = failure(p, into=model, updates=[opt, model])
    assert "2 parameters of `model` never changed (2 in no optimizer)" in msg
    assert "model.head.bias, model.head.weight" in msg
    assert {r.name for r in p.outside_optimizers()} == {"model.head.weight", "model.head.bias"}


def test_optimized_head_passes():
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with probe(model, opt) as p:
        train(model, opt, batches())
    p.assert_flows(into=model, updates=[opt, model])
    assert len(p.steps) == 3 and all(s.total_norm > 0 for s in p.steps)
    assert set(p.steps[0].module_norms) == {"model.encoder.0", "model.head"}


def test_frozen_encoder_given_to_the_optimizer():
    torch.manual_seed(0)
    model = Net()
    for q in model.encoder.parameters():
        q.requires_grad = False
    opt = torch.optim.Adam(
        [{"params": model.encoder.parameters(), "lr": 1e-3}, {"params": model.head.parameters()}], lr=1e-2
    )
    with probe(model, opt) as p:
        train(model, opt, batches())
    msg = failure(p, into=model, updates=[opt, model])
    assert "param group 0 of `optimizer` holds only frozen parameters" in msg
    assert "model.encoder.0.bias, model.encoder.0.weight" in msg
    # asked of the encoder alone: it cannot receive gradient at all
    assert "every parameter of `encoder` is frozen" in failure(p, into="encoder")


def test_frozen_backbone_with_filtered_optimizer_passes():
    torch.manual_seed(0)
    model = Net()
    for q in model.encoder.parameters():
        q.requires_grad = False
    opt = torch.optim.SGD([q for q in model.parameters() if q.requires_grad], lr=0.1)
    with probe(model, opt) as p:
        train(model, opt, batches())
    p.assert_flows(into=model, updates=[opt, model])


def test_encoder_unfrozen_fixes_it():
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.Adam(
        [{"params": model.encoder.parameters(), "lr": 1e-3}, {"params": model.head.parameters()}], lr=1e-2
    )
    with probe(model, opt) as p:
        train(model, opt, batches())
    p.assert_flows(into=model, updates=[opt, model])


def test_nan_gradients_named_with_where_they_appeared():
    torch.manual_seed(0)

    class Normed(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Linear(8, 4)
            self.out = nn.Linear(4, 3)

        def forward(self, x):
            h = torch.relu(self.body(x)) * 0  # an all-zero row: its norm is 0
            return self.out(h / h.norm(dim=1, keepdim=True).sqrt())  # sqrt(0) -> inf gradient, 0/0 -> NaN

    model = Normed()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with probe(model, opt) as p:
        train(model, opt, batches(2))
    msg = failure(p, into=model, updates=[opt, model], finite=True)
    assert "non-finite" in msg
    assert "it first appeared in the forward output of `model`" in msg or "model.out" in msg
    assert any(r.nonfinite for r in p.params.values())


def test_nan_fixed_with_eps_passes():
    torch.manual_seed(0)

    class Normed(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Linear(8, 4)
            self.out = nn.Linear(4, 3)

        def forward(self, x):
            h = torch.relu(self.body(x))
            return self.out(h / (h.norm(dim=1, keepdim=True) + 1e-6))

    model = Normed()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with probe(model, opt) as p:
        train(model, opt, batches(2))
    p.assert_flows(into=model, updates=[opt, model], finite=True)


def test_nan_loss_reports_the_first_module():
    torch.manual_seed(0)
    model = Net()
    with torch.no_grad():
        model.encoder[0].weight[0, 0] = float("nan")
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with probe(model, opt) as p:
        train(model, opt, batches(1))
    msg = failure(p, finite=True)
    assert "the loss was not finite in backward pass 1" in msg
    assert "it first appeared in the forward output of `model.encoder.0` (pass 1)" in msg


def test_missing_zero_grad():
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with probe(model, opt) as p:
        train(model, opt, batches(), zero_grad=False)
    msg = failure(p, into=model, updates=[opt, model], cleared=True)
    assert "step 2 of `optimizer` applied gradients still left in .grad from before its previous step" in msg
    assert "model.head.weight" in msg
    assert not p.zero_grads
    # the table says so too
    out = io.StringIO()
    p.report(file=out)
    assert "no zero_grad() since its previous step" in out.getvalue()


def test_zero_grad_present_passes_and_is_counted():
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with probe(model, opt) as p:
        train(model, opt, batches())
    p.assert_flows(cleared=True)
    assert len(p.zero_grads) == 3


def test_accumulation_with_clearing_after_step_is_valid():
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with probe(model, opt) as p:
        for i, (x, y) in enumerate(batches(4)):
            (F.cross_entropy(model(x), y) / 2).backward()
            if i % 2 == 1:
                opt.step()
                opt.zero_grad()
    p.assert_flows(into=model, updates=[opt, model], cleared=True)


def gan(detach_for_d: bool, clear_g_before_g_step: bool):
    torch.manual_seed(6)
    G = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 2))
    D = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 1))
    opt_g = torch.optim.Adam(G.parameters(), lr=1e-3)
    opt_d = torch.optim.Adam(D.parameters(), lr=1e-3)
    bce = nn.BCEWithLogitsLoss()
    with probe({"G": G, "D": D}, [opt_g, opt_d]) as p:
        for _ in range(3):
            real, fake = torch.randn(8, 2) + 2, G(torch.randn(8, 3))
            opt_g.zero_grad()
            opt_d.zero_grad()
            d_in = fake.detach() if detach_for_d else fake
            d_loss = bce(D(real), torch.ones(8, 1)) + bce(D(d_in), torch.zeros(8, 1))
            d_loss.backward(retain_graph=not detach_for_d)
            opt_d.step()
            if clear_g_before_g_step:
                opt_g.zero_grad()
            g_loss = bce(D(fake), torch.ones(8, 1))
            g_loss.backward()
            opt_g.step()
    return p


def test_gan_detached_sample_is_valid():
    p = gan(detach_for_d=True, clear_g_before_g_step=False)
    p.assert_flows(into=["G", "D"], updates=p.objects["optimizer[0]"], cleared=True)


def test_gan_discriminator_loss_leaking_into_generator():
    p = gan(detach_for_d=False, clear_g_before_g_step=False)
    msg = failure(p, cleared=True)
    assert "applied gradients of the backward at" in msg and "another optimizer had already stepped on" in msg
    assert "G.0.weight" in msg


def test_unregistered_layers_are_watched_and_named():
    torch.manual_seed(0)

    class Listy(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = [nn.Linear(8, 8), nn.Linear(8, 8)]  # a plain list: .parameters() misses them
            self.head = nn.Linear(8, 3)

        def forward(self, x):
            for b in self.blocks:
                x = torch.tanh(b(x))
            return self.head(x)

    model = Listy()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with probe(model, opt) as p:
        train(model, opt, batches())
    msg = failure(p, into=model, updates=[opt, model])
    assert "model.blocks.0.weight" in msg and "4 in no optimizer" in msg
    out = io.StringIO()
    p.report(file=out)
    assert "not registered" in out.getvalue()


def test_assert_flows_inside_the_block_is_an_error():
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with probe(model, opt) as p:
        train(model, opt, batches(1))
        with pytest.raises(GradFlowError, match="after the `with` block"):
            p.assert_flows(into=model)


def test_probe_removes_its_hooks():
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    backward = torch.autograd.backward
    with probe(model, opt) as p:
        assert torch.autograd.backward is not backward
        train(model, opt, batches(1))
    assert torch.autograd.backward is backward
    assert "zero_grad" not in vars(opt)
    n = len(p.passes)
    train(model, opt, batches(1))
    assert len(p.passes) == n and not model.head._forward_hooks


def test_no_backward_is_a_failure():
    model = Net()
    with probe(model) as p:
        model(torch.randn(2, 8))
    assert "no backward() ran" in failure(p, into=model)


def test_batch_for_first_layers():
    model = Net()
    x, y = batch_for(model, target="class")
    assert x.shape == (4, 8) and y.dtype == torch.long and int(y.max()) < 3
    conv = nn.Sequential(nn.Conv2d(3, 4, 3), nn.Flatten())
    (x,) = batch_for(conv)
    assert x.shape[:2] == (4, 3)
    emb = nn.Sequential(nn.Embedding(50, 8), nn.Linear(8, 2))
    x, y = batch_for(emb, target="regression")
    assert x.dtype == torch.long and int(x.max()) < 50 and y.shape == (4, 8, 2)
    with pytest.raises(ValueError, match="batch"):
        batch_for(nn.Sequential(nn.ReLU()))


def clip_run(where: str, scaler: bool = False):
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    with probe(model, opt) as p:
        for x, y in batches(3):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y) * 100  # large gradients: clipping acts
            if where == "before":
                nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            if scaler:
                (loss * 1024).backward()
                nn.utils.clip_grad_norm_(model.parameters(), 0.5)  # on the scaled gradients
                for q in model.parameters():
                    q.grad /= 1024  # what unscale_ does afterwards
            else:
                loss.backward()
            if where == "between":
                nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            opt.step()
    return p


def test_clipping_before_backward_is_flagged():
    msg = failure(clip_run("before"), cleared=True)
    assert "not the" in msg and "clip_grad_norm_(max_norm=0.5)" in msg


def test_clipping_scaled_gradients_is_flagged():
    assert "clip_grad_norm_(max_norm=0.5) left" in failure(clip_run("none", scaler=True), cleared=True)


def test_clipping_between_backward_and_step_passes():
    clip_run("between").assert_flows(cleared=True)


def test_history_carried_across_iterations_grows_the_graph():
    def run(detach):
        torch.manual_seed(0)
        proj = nn.Linear(6, 3)
        opt = torch.optim.SGD(proj.parameters(), lr=0.05)
        prototype = torch.zeros(3)
        with probe(proj, opt) as p:
            for _ in range(4):
                z = proj(torch.randn(5, 6))
                prototype = 0.9 * (prototype.detach() if detach else prototype) + 0.1 * z.mean(0)
                loss = (z - prototype).pow(2).mean()
                opt.zero_grad()
                loss.backward(retain_graph=True)
                opt.step()
        return p

    assert "grows at every backward()" in failure(run(detach=False), bounded=True)
    run(detach=True).assert_flows(into="model", bounded=True)


def test_cross_talk_is_seen_through_an_unwatched_optimizer():
    torch.manual_seed(6)
    G = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 2))
    D = nn.Linear(2, 1)
    opt_g, opt_d = torch.optim.Adam(G.parameters(), lr=1e-3), torch.optim.Adam(D.parameters(), lr=1e-3)
    bce = nn.BCEWithLogitsLoss()
    with probe(G, opt_g) as p:  # the discriminator's optimizer is not watched
        for _ in range(3):
            opt_g.zero_grad()
            opt_d.zero_grad()
            d_loss = bce(D(G(torch.randn(8, 3))), torch.zeros(8, 1))  # no .detach(): G gets gradient
            d_loss.backward()
            opt_d.step()
            g_loss = bce(D(G(torch.randn(8, 3))), torch.ones(8, 1))
            g_loss.backward()
            opt_g.step()
    assert "which another optimizer had already stepped on" in failure(p, cleared=True)


def test_clip_imported_before_the_probe_opened_is_seen():
    from torch.nn.utils import clip_grad_norm_ as bound_clip  # bound before the probe patches anything

    helper = torch.nn.utils.clip_grad._clip_grads_with_norm_
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    with probe(model, opt) as p:
        for x, y in batches(3):
            opt.zero_grad()
            (F.cross_entropy(model(x), y) * 100).backward()
            opt.step()
            bound_clip(model.parameters(), 0.5)  # after step(): clips nothing step() applies
    assert "clip_grad_norm_(max_norm=0.5)" in failure(p, cleared=True)
    assert torch.nn.utils.clip_grad._clip_grads_with_norm_ is helper  # restored
