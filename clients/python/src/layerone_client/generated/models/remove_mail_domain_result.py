from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.remove_mail_domain_result_state import RemoveMailDomainResultState
from ..types import UNSET, Unset

T = TypeVar("T", bound="RemoveMailDomainResult")


@_attrs_define
class RemoveMailDomainResult:
    """
    Attributes:
        sending_open (bool): Whether the domain may send (its gate is open).
        state (RemoveMailDomainResultState): Whether a resource exists after an operation: what the OS shows, not what
            was asked.
        catch_all (None | str | Unset): The catch-all address, if any.
        domain (None | str | Unset):
    """

    sending_open: bool
    state: RemoveMailDomainResultState
    catch_all: None | str | Unset = UNSET
    domain: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        sending_open = self.sending_open

        state = self.state.value

        catch_all: None | str | Unset
        if isinstance(self.catch_all, Unset):
            catch_all = UNSET
        else:
            catch_all = self.catch_all

        domain: None | str | Unset
        if isinstance(self.domain, Unset):
            domain = UNSET
        else:
            domain = self.domain

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "sending_open": sending_open,
                "state": state,
            }
        )
        if catch_all is not UNSET:
            field_dict["catch_all"] = catch_all
        if domain is not UNSET:
            field_dict["domain"] = domain

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        sending_open = d.pop("sending_open")

        state = RemoveMailDomainResultState(d.pop("state"))

        def _parse_catch_all(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        catch_all = _parse_catch_all(d.pop("catch_all", UNSET))

        def _parse_domain(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        domain = _parse_domain(d.pop("domain", UNSET))

        remove_mail_domain_result = cls(
            sending_open=sending_open,
            state=state,
            catch_all=catch_all,
            domain=domain,
        )

        return remove_mail_domain_result
