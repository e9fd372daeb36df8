from enum import StrEnum


class EventPageEventsItemDiskType0Filesystem(StrEnum):
    BLOBS = "blobs"
    INBOX = "inbox"
    STATE = "state"

    def __str__(self) -> str:
        return str(self.value)
