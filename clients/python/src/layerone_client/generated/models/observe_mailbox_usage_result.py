from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="ObserveMailboxUsageResult")


@_attrs_define
class ObserveMailboxUsageResult:
    """
    Attributes:
        address (str):
        bytes_ (int): Bytes of the messages in the Maildir (all folders).
        messages (int):
        quota_mib (int): The quota in MiB; 0 is unlimited.
        truncated (bool): The count stopped at the provider's bound (a very large mailbox).
    """

    address: str
    bytes_: int
    messages: int
    quota_mib: int
    truncated: bool

    def to_dict(self) -> dict[str, Any]:
        address = self.address

        bytes_ = self.bytes_

        messages = self.messages

        quota_mib = self.quota_mib

        truncated = self.truncated

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "address": address,
                "bytes": bytes_,
                "messages": messages,
                "quota_mib": quota_mib,
                "truncated": truncated,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        address = d.pop("address")

        bytes_ = d.pop("bytes")

        messages = d.pop("messages")

        quota_mib = d.pop("quota_mib")

        truncated = d.pop("truncated")

        observe_mailbox_usage_result = cls(
            address=address,
            bytes_=bytes_,
            messages=messages,
            quota_mib=quota_mib,
            truncated=truncated,
        )

        return observe_mailbox_usage_result
