from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="EnsureScheduledTaskRequestTaskType1FetchUrl")


@_attrs_define
class EnsureScheduledTaskRequestTaskType1FetchUrl:
    """An HTTP(S) URL to request; the response is discarded.

    Attributes:
        timeout_s (int): Seconds before curl gives up: 1 to 300.
        url (str):
    """

    timeout_s: int
    url: str

    def to_dict(self) -> dict[str, Any]:
        timeout_s = self.timeout_s

        url = self.url

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "timeout_s": timeout_s,
                "url": url,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        timeout_s = d.pop("timeout_s")

        url = d.pop("url")

        ensure_scheduled_task_request_task_type_1_fetch_url = cls(
            timeout_s=timeout_s,
            url=url,
        )

        return ensure_scheduled_task_request_task_type_1_fetch_url
