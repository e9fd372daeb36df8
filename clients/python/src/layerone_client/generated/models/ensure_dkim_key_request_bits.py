from enum import StrEnum


class EnsureDkimKeyRequestBits(StrEnum):
    RSA1024 = "rsa1024"
    RSA2048 = "rsa2048"
    RSA4096 = "rsa4096"

    def __str__(self) -> str:
        return str(self.value)
