from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="RestoreAccountBackupRequest")


@_attrs_define
class RestoreAccountBackupRequest:
    """
    Attributes:
        account (str):
        blob (str): The archive's SHA-256, uploaded to `blobs/in` (`PUT /v1/blobs/{sha256}`).
        id (str): The restore's id (a job key; nothing is recorded under it).
    """

    account: str
    blob: str
    id: str

    def to_dict(self) -> dict[str, Any]:
        account = self.account

        blob = self.blob

        id = self.id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "account": account,
                "blob": blob,
                "id": id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        account = d.pop("account")

        blob = d.pop("blob")

        id = d.pop("id")

        restore_account_backup_request = cls(
            account=account,
            blob=blob,
            id=id,
        )

        return restore_account_backup_request
