import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, z_dim=16, size=16, channels=1, width=64):
        super().__init__()
        self.size, self.channels = size, channels
        self.net = nn.Sequential(
            nn.Linear(z_dim, width), nn.ReLU(), nn.Linear(width, channels * size * size), nn.Tanh()
        )

    def forward(self, z):
        return self.net(z).view(-1, self.channels, self.size, self.size)


class Discriminator(nn.Module):
    def __init__(self, size=16, channels=1, width=64):
        super().__init__()
        self.net = nn.Sequential(
            nn.Flatten(), nn.Linear(channels * size * size, width), nn.LeakyReLU(0.2), nn.Linear(width, 1)
        )

    def forward(self, x):
        return self.net(x)
