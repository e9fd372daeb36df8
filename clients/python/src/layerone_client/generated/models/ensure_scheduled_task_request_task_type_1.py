from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.ensure_scheduled_task_request_task_type_1_fetch_url import (
        EnsureScheduledTaskRequestTaskType1FetchUrl,
    )


T = TypeVar("T", bound="EnsureScheduledTaskRequestTaskType1")


@_attrs_define
class EnsureScheduledTaskRequestTaskType1:
    """
    Attributes:
        fetch_url (EnsureScheduledTaskRequestTaskType1FetchUrl): An HTTP(S) URL to request; the response is discarded.
    """

    fetch_url: EnsureScheduledTaskRequestTaskType1FetchUrl

    def to_dict(self) -> dict[str, Any]:
        fetch_url = self.fetch_url.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "fetch_url": fetch_url,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.ensure_scheduled_task_request_task_type_1_fetch_url import (
            EnsureScheduledTaskRequestTaskType1FetchUrl,
        )

        d = dict(src_dict)
        fetch_url = EnsureScheduledTaskRequestTaskType1FetchUrl.from_dict(
            d.pop("fetch_url")
        )

        ensure_scheduled_task_request_task_type_1 = cls(
            fetch_url=fetch_url,
        )

        return ensure_scheduled_task_request_task_type_1
