# runtime: nonfinite
# confidence: suspicious
"""A spectral-convergence loss built inside a multi-term loss module: the spectrogram magnitudes
come straight from `abs()` of the STFT, so a silent target clip has an all-zero magnitude and the
division by its norm gives 0/0 = NaN in the loss and its gradient."""
import torch
import torch.nn as nn


class SpectralConvergence(nn.Module):
    def forward(self, x_mag, y_mag):
        return torch.norm(y_mag - x_mag, p="fro") / torch.norm(y_mag, p="fro")  # <- GA402


class STFTLoss(nn.Module):
    def __init__(self, n_fft=64):
        super().__init__()
        self.n_fft = n_fft
        self.sc = SpectralConvergence()

    def forward(self, x, y):
        window = torch.hann_window(self.n_fft)
        x_mag = torch.stft(x, self.n_fft, window=window, return_complex=True).abs()
        y_mag = torch.stft(y, self.n_fft, window=window, return_complex=True).abs()
        return self.sc(x_mag, y_mag)


if __name__ == "__main__":
    torch.manual_seed(0)
    gen = nn.Linear(16, 256)
    opt = torch.optim.Adam(gen.parameters(), lr=1e-3)
    crit = STFTLoss()
    for _ in range(2):
        fake = gen(torch.randn(2, 16))
        loss = crit(fake, torch.zeros(2, 256))  # a silent target
        opt.zero_grad()
        loss.backward()
        opt.step()
