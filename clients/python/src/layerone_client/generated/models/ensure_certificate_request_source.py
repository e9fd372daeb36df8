from enum import StrEnum


class EnsureCertificateRequestSource(StrEnum):
    ACME = "acme"
    BUNDLE = "bundle"

    def __str__(self) -> str:
        return str(self.value)
