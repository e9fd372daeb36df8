from enum import StrEnum


class SetMailSendingGateResultRecordsItemType(StrEnum):
    CNAME = "CNAME"
    MX = "MX"
    SRV = "SRV"
    TXT = "TXT"

    def __str__(self) -> str:
        return str(self.value)
