from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.ensure_scheduled_task_request_task_type_0_php_script import (
        EnsureScheduledTaskRequestTaskType0PhpScript,
    )


T = TypeVar("T", bound="EnsureScheduledTaskRequestTaskType0")


@_attrs_define
class EnsureScheduledTaskRequestTaskType0:
    """
    Attributes:
        php_script (EnsureScheduledTaskRequestTaskType0PhpScript): A PHP script in the tenant's home.
    """

    php_script: EnsureScheduledTaskRequestTaskType0PhpScript

    def to_dict(self) -> dict[str, Any]:
        php_script = self.php_script.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "php_script": php_script,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.ensure_scheduled_task_request_task_type_0_php_script import (
            EnsureScheduledTaskRequestTaskType0PhpScript,
        )

        d = dict(src_dict)
        php_script = EnsureScheduledTaskRequestTaskType0PhpScript.from_dict(
            d.pop("php_script")
        )

        ensure_scheduled_task_request_task_type_0 = cls(
            php_script=php_script,
        )

        return ensure_scheduled_task_request_task_type_0
