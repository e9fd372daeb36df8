from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.remove_scheduled_task_result_state import RemoveScheduledTaskResultState
from ..types import UNSET, Unset

T = TypeVar("T", bound="RemoveScheduledTaskResult")


@_attrs_define
class RemoveScheduledTaskResult:
    """
    Attributes:
        state (RemoveScheduledTaskResultState): Whether a resource exists after an operation: what the OS shows, not
            what was asked.
        tasks_in_crontab (int): How many tasks the account's crontab holds now.
        line (None | str | Unset): The crontab line as installed (absent once removed).
    """

    state: RemoveScheduledTaskResultState
    tasks_in_crontab: int
    line: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        state = self.state.value

        tasks_in_crontab = self.tasks_in_crontab

        line: None | str | Unset
        if isinstance(self.line, Unset):
            line = UNSET
        else:
            line = self.line

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "state": state,
                "tasks_in_crontab": tasks_in_crontab,
            }
        )
        if line is not UNSET:
            field_dict["line"] = line

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        state = RemoveScheduledTaskResultState(d.pop("state"))

        tasks_in_crontab = d.pop("tasks_in_crontab")

        def _parse_line(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        line = _parse_line(d.pop("line", UNSET))

        remove_scheduled_task_result = cls(
            state=state,
            tasks_in_crontab=tasks_in_crontab,
            line=line,
        )

        return remove_scheduled_task_result
