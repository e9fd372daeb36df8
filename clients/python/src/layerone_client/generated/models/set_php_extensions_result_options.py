from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="SetPhpExtensionsResultOptions")


@_attrs_define
class SetPhpExtensionsResultOptions:
    """The options as written into every pool of the account.

    Attributes:
        display_errors (bool | None | Unset):
        max_execution_time_s (int | None | Unset):
        max_input_time_s (int | None | Unset):
        max_input_vars (int | None | Unset):
        memory_limit_mib (int | None | Unset):
        post_max_size_mib (int | None | Unset):
        upload_max_filesize_mib (int | None | Unset):
    """

    display_errors: bool | None | Unset = UNSET
    max_execution_time_s: int | None | Unset = UNSET
    max_input_time_s: int | None | Unset = UNSET
    max_input_vars: int | None | Unset = UNSET
    memory_limit_mib: int | None | Unset = UNSET
    post_max_size_mib: int | None | Unset = UNSET
    upload_max_filesize_mib: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        display_errors: bool | None | Unset
        if isinstance(self.display_errors, Unset):
            display_errors = UNSET
        else:
            display_errors = self.display_errors

        max_execution_time_s: int | None | Unset
        if isinstance(self.max_execution_time_s, Unset):
            max_execution_time_s = UNSET
        else:
            max_execution_time_s = self.max_execution_time_s

        max_input_time_s: int | None | Unset
        if isinstance(self.max_input_time_s, Unset):
            max_input_time_s = UNSET
        else:
            max_input_time_s = self.max_input_time_s

        max_input_vars: int | None | Unset
        if isinstance(self.max_input_vars, Unset):
            max_input_vars = UNSET
        else:
            max_input_vars = self.max_input_vars

        memory_limit_mib: int | None | Unset
        if isinstance(self.memory_limit_mib, Unset):
            memory_limit_mib = UNSET
        else:
            memory_limit_mib = self.memory_limit_mib

        post_max_size_mib: int | None | Unset
        if isinstance(self.post_max_size_mib, Unset):
            post_max_size_mib = UNSET
        else:
            post_max_size_mib = self.post_max_size_mib

        upload_max_filesize_mib: int | None | Unset
        if isinstance(self.upload_max_filesize_mib, Unset):
            upload_max_filesize_mib = UNSET
        else:
            upload_max_filesize_mib = self.upload_max_filesize_mib

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if display_errors is not UNSET:
            field_dict["display_errors"] = display_errors
        if max_execution_time_s is not UNSET:
            field_dict["max_execution_time_s"] = max_execution_time_s
        if max_input_time_s is not UNSET:
            field_dict["max_input_time_s"] = max_input_time_s
        if max_input_vars is not UNSET:
            field_dict["max_input_vars"] = max_input_vars
        if memory_limit_mib is not UNSET:
            field_dict["memory_limit_mib"] = memory_limit_mib
        if post_max_size_mib is not UNSET:
            field_dict["post_max_size_mib"] = post_max_size_mib
        if upload_max_filesize_mib is not UNSET:
            field_dict["upload_max_filesize_mib"] = upload_max_filesize_mib

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)

        def _parse_display_errors(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        display_errors = _parse_display_errors(d.pop("display_errors", UNSET))

        def _parse_max_execution_time_s(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_execution_time_s = _parse_max_execution_time_s(
            d.pop("max_execution_time_s", UNSET)
        )

        def _parse_max_input_time_s(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_input_time_s = _parse_max_input_time_s(d.pop("max_input_time_s", UNSET))

        def _parse_max_input_vars(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_input_vars = _parse_max_input_vars(d.pop("max_input_vars", UNSET))

        def _parse_memory_limit_mib(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        memory_limit_mib = _parse_memory_limit_mib(d.pop("memory_limit_mib", UNSET))

        def _parse_post_max_size_mib(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        post_max_size_mib = _parse_post_max_size_mib(d.pop("post_max_size_mib", UNSET))

        def _parse_upload_max_filesize_mib(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        upload_max_filesize_mib = _parse_upload_max_filesize_mib(
            d.pop("upload_max_filesize_mib", UNSET)
        )

        set_php_extensions_result_options = cls(
            display_errors=display_errors,
            max_execution_time_s=max_execution_time_s,
            max_input_time_s=max_input_time_s,
            max_input_vars=max_input_vars,
            memory_limit_mib=memory_limit_mib,
            post_max_size_mib=post_max_size_mib,
            upload_max_filesize_mib=upload_max_filesize_mib,
        )

        return set_php_extensions_result_options
