# runtime: trains
"""A HiFi-GAN generator's mel loss as the fix writes it: the mel spectrogram of the generated
audio keeps its graph, so the term added with `+=` sends gradient to the generator."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MelSTFT(nn.Module):
    def __init__(self, n_fft=32, n_mel=8):
        super().__init__()
        self.register_buffer("mel_basis", torch.rand(n_mel, n_fft))

    def mel_spectrogram(self, y):
        magnitudes = y.abs()
        return torch.log(torch.clamp(self.mel_basis @ magnitudes.T, min=1e-5))


torch.manual_seed(0)
generator = nn.Sequential(nn.Linear(8, 32), nn.Tanh())
stft = MelSTFT()
l1loss = nn.L1Loss()
optim_g = torch.optim.Adam(generator.parameters(), lr=1e-3)
for _ in range(3):
    mel_real, audio_real = torch.randn(8, 4), torch.randn(4, 32)
    fake_audio = generator(mel_real.T)
    loss_g = F.mse_loss(fake_audio, audio_real)
    mel_fake = stft.mel_spectrogram(fake_audio)
    loss_g += 45.0 * l1loss(mel_real, mel_fake)
    optim_g.zero_grad()
    loss_g.backward()
    optim_g.step()
