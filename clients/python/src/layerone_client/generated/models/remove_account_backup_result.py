from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.remove_account_backup_result_state import RemoveAccountBackupResultState
from ..types import UNSET, Unset

T = TypeVar("T", bound="RemoveAccountBackupResult")


@_attrs_define
class RemoveAccountBackupResult:
    """
    Attributes:
        bytes_ (int): Bytes of file content stored in the home's part (holes excluded: what it costs).
        databases (list[str]): The databases dumped into it (full names).
        dirs (int):
        files (int):
        size (int): Its size in bytes (gzip-compressed tar).
        skipped (int): Entries of the home left out: sockets, FIFOs, devices, mount points, and symlinks
            pointing outside the home (absolute or escaping), which a restore would refuse.
        state (RemoveAccountBackupResultState): Whether a resource exists after an operation: what the OS shows, not
            what was asked.
        symlinks (int):
        apparent_bytes (int | Unset): The files' sizes added up, holes included (what a restore brings back). Default:
            0.
        blob (None | str | Unset): The archive's SHA-256: its name in `blobs/out`, downloadable as `/v1/blobs/{blob}`.
        complete (bool | Unset): True only for an archive that holds every directory and file of the home it was
            meant to (`unreadable` is 0); false when something was left out, and for a removal. Default: False.
        created_at_ms (int | None | Unset):
        sparse_files (int | Unset): Files stored as their data regions, their holes kept as holes. Default: 0.
        unreadable (int | Unset): Directories and files the tenant itself could not read (mode 000, or made so while
            the home was read), left out of the archive. Default: 0.
    """

    bytes_: int
    databases: list[str]
    dirs: int
    files: int
    size: int
    skipped: int
    state: RemoveAccountBackupResultState
    symlinks: int
    apparent_bytes: int | Unset = 0
    blob: None | str | Unset = UNSET
    complete: bool | Unset = False
    created_at_ms: int | None | Unset = UNSET
    sparse_files: int | Unset = 0
    unreadable: int | Unset = 0

    def to_dict(self) -> dict[str, Any]:
        bytes_ = self.bytes_

        databases = self.databases

        dirs = self.dirs

        files = self.files

        size = self.size

        skipped = self.skipped

        state = self.state.value

        symlinks = self.symlinks

        apparent_bytes = self.apparent_bytes

        blob: None | str | Unset
        if isinstance(self.blob, Unset):
            blob = UNSET
        else:
            blob = self.blob

        complete = self.complete

        created_at_ms: int | None | Unset
        if isinstance(self.created_at_ms, Unset):
            created_at_ms = UNSET
        else:
            created_at_ms = self.created_at_ms

        sparse_files = self.sparse_files

        unreadable = self.unreadable

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "bytes": bytes_,
                "databases": databases,
                "dirs": dirs,
                "files": files,
                "size": size,
                "skipped": skipped,
                "state": state,
                "symlinks": symlinks,
            }
        )
        if apparent_bytes is not UNSET:
            field_dict["apparent_bytes"] = apparent_bytes
        if blob is not UNSET:
            field_dict["blob"] = blob
        if complete is not UNSET:
            field_dict["complete"] = complete
        if created_at_ms is not UNSET:
            field_dict["created_at_ms"] = created_at_ms
        if sparse_files is not UNSET:
            field_dict["sparse_files"] = sparse_files
        if unreadable is not UNSET:
            field_dict["unreadable"] = unreadable

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        bytes_ = d.pop("bytes")

        databases = cast(list[str], d.pop("databases"))

        dirs = d.pop("dirs")

        files = d.pop("files")

        size = d.pop("size")

        skipped = d.pop("skipped")

        state = RemoveAccountBackupResultState(d.pop("state"))

        symlinks = d.pop("symlinks")

        apparent_bytes = d.pop("apparent_bytes", UNSET)

        def _parse_blob(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        blob = _parse_blob(d.pop("blob", UNSET))

        complete = d.pop("complete", UNSET)

        def _parse_created_at_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        created_at_ms = _parse_created_at_ms(d.pop("created_at_ms", UNSET))

        sparse_files = d.pop("sparse_files", UNSET)

        unreadable = d.pop("unreadable", UNSET)

        remove_account_backup_result = cls(
            bytes_=bytes_,
            databases=databases,
            dirs=dirs,
            files=files,
            size=size,
            skipped=skipped,
            state=state,
            symlinks=symlinks,
            apparent_bytes=apparent_bytes,
            blob=blob,
            complete=complete,
            created_at_ms=created_at_ms,
            sparse_files=sparse_files,
            unreadable=unreadable,
        )

        return remove_account_backup_result
