from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="RemoveErrorPagesResultPages")


@_attrs_define
class RemoveErrorPagesResultPages:
    """The pages the domain's vhost now names (empty once removed).

    Attributes:
        field_400 (None | str | Unset):
        field_401 (None | str | Unset):
        field_403 (None | str | Unset):
        field_404 (None | str | Unset):
        field_405 (None | str | Unset):
        field_410 (None | str | Unset):
        field_429 (None | str | Unset):
        field_500 (None | str | Unset):
        field_502 (None | str | Unset):
        field_503 (None | str | Unset):
        field_504 (None | str | Unset):
    """

    field_400: None | str | Unset = UNSET
    field_401: None | str | Unset = UNSET
    field_403: None | str | Unset = UNSET
    field_404: None | str | Unset = UNSET
    field_405: None | str | Unset = UNSET
    field_410: None | str | Unset = UNSET
    field_429: None | str | Unset = UNSET
    field_500: None | str | Unset = UNSET
    field_502: None | str | Unset = UNSET
    field_503: None | str | Unset = UNSET
    field_504: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        field_400: None | str | Unset
        if isinstance(self.field_400, Unset):
            field_400 = UNSET
        else:
            field_400 = self.field_400

        field_401: None | str | Unset
        if isinstance(self.field_401, Unset):
            field_401 = UNSET
        else:
            field_401 = self.field_401

        field_403: None | str | Unset
        if isinstance(self.field_403, Unset):
            field_403 = UNSET
        else:
            field_403 = self.field_403

        field_404: None | str | Unset
        if isinstance(self.field_404, Unset):
            field_404 = UNSET
        else:
            field_404 = self.field_404

        field_405: None | str | Unset
        if isinstance(self.field_405, Unset):
            field_405 = UNSET
        else:
            field_405 = self.field_405

        field_410: None | str | Unset
        if isinstance(self.field_410, Unset):
            field_410 = UNSET
        else:
            field_410 = self.field_410

        field_429: None | str | Unset
        if isinstance(self.field_429, Unset):
            field_429 = UNSET
        else:
            field_429 = self.field_429

        field_500: None | str | Unset
        if isinstance(self.field_500, Unset):
            field_500 = UNSET
        else:
            field_500 = self.field_500

        field_502: None | str | Unset
        if isinstance(self.field_502, Unset):
            field_502 = UNSET
        else:
            field_502 = self.field_502

        field_503: None | str | Unset
        if isinstance(self.field_503, Unset):
            field_503 = UNSET
        else:
            field_503 = self.field_503

        field_504: None | str | Unset
        if isinstance(self.field_504, Unset):
            field_504 = UNSET
        else:
            field_504 = self.field_504

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if field_400 is not UNSET:
            field_dict["400"] = field_400
        if field_401 is not UNSET:
            field_dict["401"] = field_401
        if field_403 is not UNSET:
            field_dict["403"] = field_403
        if field_404 is not UNSET:
            field_dict["404"] = field_404
        if field_405 is not UNSET:
            field_dict["405"] = field_405
        if field_410 is not UNSET:
            field_dict["410"] = field_410
        if field_429 is not UNSET:
            field_dict["429"] = field_429
        if field_500 is not UNSET:
            field_dict["500"] = field_500
        if field_502 is not UNSET:
            field_dict["502"] = field_502
        if field_503 is not UNSET:
            field_dict["503"] = field_503
        if field_504 is not UNSET:
            field_dict["504"] = field_504

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)

        def _parse_field_400(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        field_400 = _parse_field_400(d.pop("400", UNSET))

        def _parse_field_401(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        field_401 = _parse_field_401(d.pop("401", UNSET))

        def _parse_field_403(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        field_403 = _parse_field_403(d.pop("403", UNSET))

        def _parse_field_404(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        field_404 = _parse_field_404(d.pop("404", UNSET))

        def _parse_field_405(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        field_405 = _parse_field_405(d.pop("405", UNSET))

        def _parse_field_410(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        field_410 = _parse_field_410(d.pop("410", UNSET))

        def _parse_field_429(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        field_429 = _parse_field_429(d.pop("429", UNSET))

        def _parse_field_500(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        field_500 = _parse_field_500(d.pop("500", UNSET))

        def _parse_field_502(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        field_502 = _parse_field_502(d.pop("502", UNSET))

        def _parse_field_503(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        field_503 = _parse_field_503(d.pop("503", UNSET))

        def _parse_field_504(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        field_504 = _parse_field_504(d.pop("504", UNSET))

        remove_error_pages_result_pages = cls(
            field_400=field_400,
            field_401=field_401,
            field_403=field_403,
            field_404=field_404,
            field_405=field_405,
            field_410=field_410,
            field_429=field_429,
            field_500=field_500,
            field_502=field_502,
            field_503=field_503,
            field_504=field_504,
        )

        return remove_error_pages_result_pages
