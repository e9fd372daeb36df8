from enum import StrEnum


class ObserveCertificatesResultCertificatesItemSource(StrEnum):
    ACME = "acme"
    BUNDLE = "bundle"

    def __str__(self) -> str:
        return str(self.value)
