"""Loss scalers of other libraries (libraries/tables.THIRD_PARTY_SCALERS): timm's training scripts
make `loss_scaler = NativeScaler()` where they switch float16 autocast on, and step through it;
a scaler is in use, so GA409's "float16 autocast with no GradScaler" does not hold."""

from helpers import analyze, found

TIMM_STYLE = """\
import torch
from timm.utils import NativeScaler


def train_one_epoch(model, loader, optimizer, loss_fn, amp_autocast, loss_scaler):
    for x, y in loader:
        with amp_autocast():
            loss = loss_fn(model(x), y)
        optimizer.zero_grad()
        if loss_scaler is not None:
            loss_scaler(loss, optimizer, clip_grad=1.0, parameters=model.parameters())
        else:
            loss.backward()
            optimizer.step()


def main(use_amp, loader):
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    amp_autocast, loss_scaler = None, None
    if use_amp:
        amp_autocast = torch.cuda.amp.autocast
        loss_scaler = NativeScaler()
    train_one_epoch(model, loader, optimizer, torch.nn.functional.cross_entropy, amp_autocast, loss_scaler)
"""


def test_a_native_scaler_is_a_grad_scaler_in_use():
    assert found(analyze(TIMM_STYLE)) == []


def test_without_it_float16_autocast_has_no_scaler():
    source = TIMM_STYLE.replace("loss_scaler = NativeScaler()", "loss_scaler = None")
    assert source != TIMM_STYLE
    assert [code for _, code in found(analyze(source))] == ["GA409"]
