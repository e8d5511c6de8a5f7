# reduction-of: ParallelWaveGAN@86740373ec60 parallel_wavegan/losses/stft_loss.py:61 GA402
# false: GA402
# quiet: GA402
"""A spectral-convergence loss used only inside a multi-term STFT loss module of the same file, which
gives it magnitudes clamped away from 0.

The real code (ParallelWaveGAN losses/stft_loss.py): `SpectralConvergenceLoss.forward(x_mag, y_mag)`
returns `torch.norm(y_mag - x_mag, p="fro") / torch.norm(y_mag, p="fro")`; `STFTLoss.__init__` builds
it, and `STFTLoss.forward` passes `stft(...)` magnitudes, `torch.sqrt(torch.clamp(real ** 2 + imag **
2, min=1e-7))`; the training script lives in another file.

False finding: GA402 at that division, "seen running `SpectralConvergenceLoss.forward` on its own
with inputs that require grad". Its only user passes magnitudes >= sqrt(1e-7): the norm of the
target's magnitudes is > 0, even for a silent clip.

Verified with torch 2.13 (CPU): with an all-zero target the loss and the generator's gradient are
finite. Prints OK.
"""
import torch
import torch.nn as nn


def magnitude(x, n_fft, window):
    spec = torch.stft(x, n_fft, window=window, return_complex=True)
    return torch.sqrt(torch.clamp(spec.real**2 + spec.imag**2, min=1e-7))


class SpectralConvergenceLoss(nn.Module):
    def forward(self, x_mag, y_mag):
        return torch.norm(y_mag - x_mag, p="fro") / torch.norm(y_mag, p="fro")


class STFTLoss(nn.Module):
    def __init__(self, n_fft=64):
        super().__init__()
        self.n_fft = n_fft
        self.spectral_convergence_loss = SpectralConvergenceLoss()

    def forward(self, x, y):
        window = torch.hann_window(self.n_fft)
        return self.spectral_convergence_loss(magnitude(x, self.n_fft, window), magnitude(y, self.n_fft, window))


if __name__ == "__main__":
    # looked up by name: this check is no use of the classes the engine follows, which keeps them
    # checked on their own, as in the project (the training loop lives in another file)
    torch.manual_seed(0)
    gen = nn.Linear(16, 256)
    loss = globals()["STFTLoss"]()(gen(torch.randn(2, 16)), torch.zeros(2, 256))
    loss.backward()
    assert torch.isfinite(loss) and all(torch.isfinite(p.grad).all() for p in gen.parameters())
    print("OK")
