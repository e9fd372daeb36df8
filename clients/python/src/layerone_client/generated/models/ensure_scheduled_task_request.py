from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.ensure_scheduled_task_request_task_type_0 import (
        EnsureScheduledTaskRequestTaskType0,
    )
    from ..models.ensure_scheduled_task_request_task_type_1 import (
        EnsureScheduledTaskRequestTaskType1,
    )


T = TypeVar("T", bound="EnsureScheduledTaskRequest")


@_attrs_define
class EnsureScheduledTaskRequest:
    """
    Attributes:
        account (str):
        id (str):
        schedule (str): Five cron fields or an `@daily`-style macro, in the server's time zone.
        task (EnsureScheduledTaskRequestTaskType0 | EnsureScheduledTaskRequestTaskType1): What a scheduled task runs.
    """

    account: str
    id: str
    schedule: str
    task: EnsureScheduledTaskRequestTaskType0 | EnsureScheduledTaskRequestTaskType1

    def to_dict(self) -> dict[str, Any]:
        from ..models.ensure_scheduled_task_request_task_type_0 import (
            EnsureScheduledTaskRequestTaskType0,
        )

        account = self.account

        id = self.id

        schedule = self.schedule

        task: dict[str, Any]
        if isinstance(self.task, EnsureScheduledTaskRequestTaskType0):
            task = self.task.to_dict()
        else:
            task = self.task.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "account": account,
                "id": id,
                "schedule": schedule,
                "task": task,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.ensure_scheduled_task_request_task_type_0 import (
            EnsureScheduledTaskRequestTaskType0,
        )
        from ..models.ensure_scheduled_task_request_task_type_1 import (
            EnsureScheduledTaskRequestTaskType1,
        )

        d = dict(src_dict)
        account = d.pop("account")

        id = d.pop("id")

        schedule = d.pop("schedule")

        def _parse_task(
            data: object,
        ) -> EnsureScheduledTaskRequestTaskType0 | EnsureScheduledTaskRequestTaskType1:
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                task_type_0 = EnsureScheduledTaskRequestTaskType0.from_dict(data)

                return task_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            task_type_1 = EnsureScheduledTaskRequestTaskType1.from_dict(data)

            return task_type_1

        task = _parse_task(d.pop("task"))

        ensure_scheduled_task_request = cls(
            account=account,
            id=id,
            schedule=schedule,
            task=task,
        )

        return ensure_scheduled_task_request
