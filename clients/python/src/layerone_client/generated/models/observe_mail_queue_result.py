from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.observe_mail_queue_result_by_queue import (
        ObserveMailQueueResultByQueue,
    )
    from ..models.observe_mail_queue_result_top_sender_domains_item import (
        ObserveMailQueueResultTopSenderDomainsItem,
    )


T = TypeVar("T", bound="ObserveMailQueueResult")


@_attrs_define
class ObserveMailQueueResult:
    """
    Attributes:
        by_queue (ObserveMailQueueResultByQueue): How many messages each of Postfix's queues holds.
        bytes_ (int): Their sizes added up, in bytes.
        messages (int): Every message in the queue, whatever its queue.
        top_sender_domains (list[ObserveMailQueueResultTopSenderDomainsItem]): The ten sender domains with the most
            messages queued, most first (ties by name).
        unreadable_entries (int): Lines of Postfix's listing the node could not read: when not 0, the counts are short
            by at least this many messages.
        oldest_arrival (int | None | Unset): When the oldest message entered the queue, in Unix seconds; `null` when it
            is empty.
    """

    by_queue: ObserveMailQueueResultByQueue
    bytes_: int
    messages: int
    top_sender_domains: list[ObserveMailQueueResultTopSenderDomainsItem]
    unreadable_entries: int
    oldest_arrival: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        by_queue = self.by_queue.to_dict()

        bytes_ = self.bytes_

        messages = self.messages

        top_sender_domains = []
        for top_sender_domains_item_data in self.top_sender_domains:
            top_sender_domains_item = top_sender_domains_item_data.to_dict()
            top_sender_domains.append(top_sender_domains_item)

        unreadable_entries = self.unreadable_entries

        oldest_arrival: int | None | Unset
        if isinstance(self.oldest_arrival, Unset):
            oldest_arrival = UNSET
        else:
            oldest_arrival = self.oldest_arrival

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "by_queue": by_queue,
                "bytes": bytes_,
                "messages": messages,
                "top_sender_domains": top_sender_domains,
                "unreadable_entries": unreadable_entries,
            }
        )
        if oldest_arrival is not UNSET:
            field_dict["oldest_arrival"] = oldest_arrival

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.observe_mail_queue_result_by_queue import (
            ObserveMailQueueResultByQueue,
        )
        from ..models.observe_mail_queue_result_top_sender_domains_item import (
            ObserveMailQueueResultTopSenderDomainsItem,
        )

        d = dict(src_dict)
        by_queue = ObserveMailQueueResultByQueue.from_dict(d.pop("by_queue"))

        bytes_ = d.pop("bytes")

        messages = d.pop("messages")

        top_sender_domains = []
        _top_sender_domains = d.pop("top_sender_domains")
        for top_sender_domains_item_data in _top_sender_domains:
            top_sender_domains_item = (
                ObserveMailQueueResultTopSenderDomainsItem.from_dict(
                    top_sender_domains_item_data
                )
            )

            top_sender_domains.append(top_sender_domains_item)

        unreadable_entries = d.pop("unreadable_entries")

        def _parse_oldest_arrival(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        oldest_arrival = _parse_oldest_arrival(d.pop("oldest_arrival", UNSET))

        observe_mail_queue_result = cls(
            by_queue=by_queue,
            bytes_=bytes_,
            messages=messages,
            top_sender_domains=top_sender_domains,
            unreadable_entries=unreadable_entries,
            oldest_arrival=oldest_arrival,
        )

        return observe_mail_queue_result
