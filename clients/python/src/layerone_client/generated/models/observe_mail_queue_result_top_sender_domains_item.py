from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="ObserveMailQueueResultTopSenderDomainsItem")


@_attrs_define
class ObserveMailQueueResultTopSenderDomainsItem:
    """One sender domain and how many of the queued messages it sent.

    Attributes:
        domain (str): The domain of the envelope sender, lower-cased; `<>` for bounces.
        messages (int):
    """

    domain: str
    messages: int

    def to_dict(self) -> dict[str, Any]:
        domain = self.domain

        messages = self.messages

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "domain": domain,
                "messages": messages,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        domain = d.pop("domain")

        messages = d.pop("messages")

        observe_mail_queue_result_top_sender_domains_item = cls(
            domain=domain,
            messages=messages,
        )

        return observe_mail_queue_result_top_sender_domains_item
