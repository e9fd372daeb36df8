from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="ObserveRuntimeResultLoad")


@_attrs_define
class ObserveRuntimeResultLoad:
    """
    Attributes:
        fifteen (float):
        five (float):
        one (float):
    """

    fifteen: float
    five: float
    one: float

    def to_dict(self) -> dict[str, Any]:
        fifteen = self.fifteen

        five = self.five

        one = self.one

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "fifteen": fifteen,
                "five": five,
                "one": one,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        fifteen = d.pop("fifteen")

        five = d.pop("five")

        one = d.pop("one")

        observe_runtime_result_load = cls(
            fifteen=fifteen,
            five=five,
            one=one,
        )

        return observe_runtime_result_load
