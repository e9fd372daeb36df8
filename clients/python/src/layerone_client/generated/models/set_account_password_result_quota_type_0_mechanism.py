from enum import StrEnum


class SetAccountPasswordResultQuotaType0Mechanism(StrEnum):
    BTRFS_QGROUP = "btrfs_qgroup"
    NONE = "none"
    USER_QUOTA = "user_quota"

    def __str__(self) -> str:
        return str(self.value)
