"""A bitwise CRC32C (Castagnoli) for the seed generators, which run with
Debian's python3 (numcodecs 0.11 has no crc32c codec to ask)."""


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF
