from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.ensure_scheduled_task_request_task_type_0_php_script_php_version import (
    EnsureScheduledTaskRequestTaskType0PhpScriptPhpVersion,
)

T = TypeVar("T", bound="EnsureScheduledTaskRequestTaskType0PhpScript")


@_attrs_define
class EnsureScheduledTaskRequestTaskType0PhpScript:
    """A PHP script in the tenant's home.

    Attributes:
        path (str): The script, relative to the home.
        php_version (EnsureScheduledTaskRequestTaskType0PhpScriptPhpVersion): The PHP version whose command-line binary
            runs it; must be installed.
    """

    path: str
    php_version: EnsureScheduledTaskRequestTaskType0PhpScriptPhpVersion

    def to_dict(self) -> dict[str, Any]:
        path = self.path

        php_version = self.php_version.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "path": path,
                "php_version": php_version,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        path = d.pop("path")

        php_version = EnsureScheduledTaskRequestTaskType0PhpScriptPhpVersion(
            d.pop("php_version")
        )

        ensure_scheduled_task_request_task_type_0_php_script = cls(
            path=path,
            php_version=php_version,
        )

        return ensure_scheduled_task_request_task_type_0_php_script
