from __future__ import annotations

from collections.abc import Mapping
from typing import (
    Any,
    Literal,
    Self,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="ReadSudoEventsResultEntriesItemType0")


@_attrs_define
class ReadSudoEventsResultEntriesItemType0:
    """A sudo event.

    Attributes:
        command (str):
        kind (Literal['event']):
        time (str): When, as sudo wrote it (the node's local time): `Nov 29 08:44:57 2026`.
        user (str): Who ran sudo.
        message (None | str | Unset): What sudo said besides running the command (`3 incorrect password attempts`,
            `user NOT in sudoers`); absent for a command that ran.
        pwd (None | str | Unset):
        runas_group (None | str | Unset):
        runas_user (None | str | Unset): The user the command ran as.
        tty (None | str | Unset):
    """

    command: str
    kind: Literal["event"]
    time: str
    user: str
    message: None | str | Unset = UNSET
    pwd: None | str | Unset = UNSET
    runas_group: None | str | Unset = UNSET
    runas_user: None | str | Unset = UNSET
    tty: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        command = self.command

        kind = self.kind

        time = self.time

        user = self.user

        message: None | str | Unset
        if isinstance(self.message, Unset):
            message = UNSET
        else:
            message = self.message

        pwd: None | str | Unset
        if isinstance(self.pwd, Unset):
            pwd = UNSET
        else:
            pwd = self.pwd

        runas_group: None | str | Unset
        if isinstance(self.runas_group, Unset):
            runas_group = UNSET
        else:
            runas_group = self.runas_group

        runas_user: None | str | Unset
        if isinstance(self.runas_user, Unset):
            runas_user = UNSET
        else:
            runas_user = self.runas_user

        tty: None | str | Unset
        if isinstance(self.tty, Unset):
            tty = UNSET
        else:
            tty = self.tty

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "command": command,
                "kind": kind,
                "time": time,
                "user": user,
            }
        )
        if message is not UNSET:
            field_dict["message"] = message
        if pwd is not UNSET:
            field_dict["pwd"] = pwd
        if runas_group is not UNSET:
            field_dict["runas_group"] = runas_group
        if runas_user is not UNSET:
            field_dict["runas_user"] = runas_user
        if tty is not UNSET:
            field_dict["tty"] = tty

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        command = d.pop("command")

        kind = cast(Literal["event"], d.pop("kind"))
        if kind != "event":
            raise ValueError(f"kind must match const 'event', got '{kind}'")

        time = d.pop("time")

        user = d.pop("user")

        def _parse_message(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        message = _parse_message(d.pop("message", UNSET))

        def _parse_pwd(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        pwd = _parse_pwd(d.pop("pwd", UNSET))

        def _parse_runas_group(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        runas_group = _parse_runas_group(d.pop("runas_group", UNSET))

        def _parse_runas_user(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        runas_user = _parse_runas_user(d.pop("runas_user", UNSET))

        def _parse_tty(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        tty = _parse_tty(d.pop("tty", UNSET))

        read_sudo_events_result_entries_item_type_0 = cls(
            command=command,
            kind=kind,
            time=time,
            user=user,
            message=message,
            pwd=pwd,
            runas_group=runas_group,
            runas_user=runas_user,
            tty=tty,
        )

        return read_sudo_events_result_entries_item_type_0
