"""Inspect's ``.eval`` archives (zip; deflate or zstd) read with bounded memory: the
zip-bomb checks and the member limits of the package docstring, members inflated in 1 MiB
steps, damaged or encrypted members as errors naming the file and the member.
"""

from __future__ import annotations

import struct
import zipfile
import zlib
from pathlib import Path

from bayeserr.base.errors import InputError, human_bytes
from bayeserr.data.readers.values import _parse_json, _text_of

ZSTD_METHOD = 93  # zip compression method id of Zstandard
ZIP_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflate", ZSTD_METHOD: "zstd"}
#: Largest decompressed size of one archive member (a header or one sample).
MAX_MEMBER_BYTES = 1 << 30
#: Largest total decompressed size read from one archive.
MAX_ARCHIVE_BYTES = 8 << 30
#: Largest compression ratio (declared size / compressed size) of a member over
#: :data:`RATIO_FREE_BYTES`, and of the members read from an archive together
#: (their declared sizes / the file's size) over :data:`ARCHIVE_RATIO_FREE_BYTES`.
#: Inspect's logs compress about 5:1 (10:1 for the most repetitive members);
#: deflate cannot pass about 1,030:1, zstd reaches 30,000:1 on filler.
MAX_RATIO = 1000
#: Members up to this size are not held to :data:`MAX_RATIO` (a small member of
#: repeated text may compress further, and costs little).
RATIO_FREE_BYTES = 4 << 20
#: Archives whose members read declare up to this much in total are not held to
#: :data:`MAX_RATIO` as a whole.
ARCHIVE_RATIO_FREE_BYTES = 64 << 20
#: zip local file header: fixed part (the name and extra field follow)
_LOCAL_HEADER = 30
_CHUNK = 1 << 20


class _Compressed:
    """A file object's next ``n`` bytes, read in pieces (a member's compressed
    data, for zstd's streaming decompressor); ``short``: the file ended first."""

    def __init__(self, fh, n: int):
        self.fh, self.left, self.short = fh, n, False

    def read(self, size: int = -1) -> bytes:
        size = self.left if size is None or size < 0 else min(size, self.left)
        data = self.fh.read(size) if size else b""
        self.left -= len(data)
        self.short = self.short or len(data) < size
        return data


class DamagedArchive(InputError):
    """An ``.eval`` archive that cannot be read as a zip, or a member that does
    not inflate to what its entry declares: damaged, or (a log being written)
    caught mid-write, so ``bayeserr watch --follow`` reads it again later."""


class EvalArchive:
    """A ``.eval`` zip whose members are read with hard bounds: no overlapping
    entries, no member or archive past the size and ratio limits, and members
    stream-decompressed no further than they declare."""

    DAMAGED = "The archive is damaged (truncated or corrupted): copy it again or re-run the evaluation."
    BOMB = "Check where the file came from; raise the limit only if the log is genuine."

    def __init__(self, path: Path):
        self.path = path
        self.total = 0
        try:
            self.zip = zipfile.ZipFile(path)
            self.size = path.stat().st_size
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError,
                NotImplementedError, struct.error, UnicodeDecodeError) as exc:
            raise DamagedArchive(f"{path}: not a readable .eval archive (zip: {exc}). "
                             "Check the file; an .eval log is a zip archive.") from None
        try:
            self._check_overlaps()
        except InputError:
            self.zip.close()
            raise

    def close(self):
        self.zip.close()

    def _check_overlaps(self) -> None:
        """Refuse entries whose records (local header and compressed data) share
        bytes of the file: several entries pointing at one member's data, or
        Fifield's overlapping zip bomb, which turn a small file into gigabytes.
        From the central directory alone (no member is read); each record is
        taken at its smallest (30 bytes, the name, no extra field, no data
        descriptor), so no archive zipfile writes can be refused."""
        entries = sorted(self.zip.infolist(), key=lambda i: i.header_offset)
        last, end = None, -1
        for info in entries:
            if info.header_offset < end:
                raise InputError(
                    f"{self.path}: members '{last.filename}' and '{info.filename}' overlap (the archive's "
                    "directory points both at the same compressed bytes): a zip bomb or a damaged archive, "
                    "never a log Inspect writes; nothing was read from it. Check where the file came from, "
                    "or re-run the evaluation.")
            name = info.orig_filename.encode("utf-8" if info.flag_bits & 0x800 else "cp437", "replace")
            stop = info.header_offset + _LOCAL_HEADER + len(name) + info.compress_size
            if stop > end:
                last, end = info, stop

    def check(self, info: zipfile.ZipInfo) -> None:
        """The checks of a member that need no reading: encryption, compression
        method, declared size and compression ratio."""
        where = f"{self.path}, member {info.filename}"
        if info.flag_bits & 0x1:
            raise InputError(f"{where}: the member is encrypted; bayeserr reads unencrypted logs "
                             "only. Write the log without a password.")
        if info.compress_type not in ZIP_METHODS:
            raise InputError(
                f"{where}: compression method {info.compress_type} is not supported (Inspect "
                f"writes {', '.join(ZIP_METHODS.values())}). Rewrite the log with Inspect, e.g. "
                "`inspect log convert`.")
        if info.file_size > MAX_MEMBER_BYTES:
            raise InputError(
                f"{where}: declares {human_bytes(info.file_size)} uncompressed, above the limit of "
                f"{human_bytes(MAX_MEMBER_BYTES)} per member (bayeserr.data.readers.MAX_MEMBER_BYTES). "
                "No log sample is this large: check the file; raise the limit only if it is genuine.")
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size > RATIO_FREE_BYTES and ratio > MAX_RATIO:
            raise InputError(
                f"{where}: declares {human_bytes(info.file_size)} uncompressed from "
                f"{human_bytes(info.compress_size)}, a ratio of {ratio:,.0f}:1, above the limit of "
                f"{MAX_RATIO:,}:1 for members over {human_bytes(RATIO_FREE_BYTES)} (bayeserr.data.readers."
                "MAX_RATIO; logs compress about 5:1): a decompression bomb, not a log; nothing was inflated. "
                f"{self.BOMB}")

    def check_all(self, infos) -> None:
        """:meth:`check` each member to be read (in reading order), then their
        total: :data:`MAX_ARCHIVE_BYTES`, and :data:`MAX_RATIO` times the
        file's size; before anything is inflated."""
        total = self.total
        for info in infos:
            self.check(info)
            total += info.file_size
            if total > MAX_ARCHIVE_BYTES:
                raise self._archive_total(info)
        if total > ARCHIVE_RATIO_FREE_BYTES and total > MAX_RATIO * max(self.size, 1):
            raise InputError(
                f"{self.path}: the members read inflate to {human_bytes(total)} from a "
                f"{human_bytes(self.size)} file, more than {MAX_RATIO:,} times its size "
                "(bayeserr.data.readers.MAX_RATIO; logs compress about 5:1): a decompression bomb, not a "
                f"log; nothing was inflated. {self.BOMB}")

    def _archive_total(self, info) -> InputError:
        return InputError(
            f"{self.path}, member {info.filename}: the archive inflates past "
            f"{human_bytes(MAX_ARCHIVE_BYTES)} in total (bayeserr.data.readers.MAX_ARCHIVE_BYTES). Check the "
            "file; raise the limit only if it is genuine.")

    def read(self, info: zipfile.ZipInfo) -> bytearray:
        """The member's bytes, at most its declared size and the module limits."""
        where = f"{self.path}, member {info.filename}"
        self.check(info)
        if self.total + info.file_size > MAX_ARCHIVE_BYTES:
            raise self._archive_total(info)
        try:
            data = self._zstd(info, where) if info.compress_type == ZSTD_METHOD else self._plain(info, where)
        except InputError:
            raise
        except Exception as exc:  # zlib.error, BadZipFile (bad CRC), EOFError, ZstdError, OSError ...
            raise DamagedArchive(f"{where}: cannot be decompressed ({type(exc).__name__}: "
                             f"{str(exc)[:200]}). {self.DAMAGED}") from None
        if len(data) != info.file_size:
            raise DamagedArchive(f"{where}: inflates to {len(data)} bytes, not the {info.file_size} its "
                             f"entry declares. {self.DAMAGED}")
        self.total += len(data)
        return data

    def read_json(self, info: zipfile.ZipInfo, fix: str):
        """The member parsed as JSON; its bytes are freed once decoded."""
        where = f"{self.path}, member {info.filename}"
        text = _text_of(self.read(info), where, fix)  # the bytes are dropped when this returns
        return _parse_json(text, where, fix)

    def _too_big(self, info, where):
        return DamagedArchive(f"{where}: inflates past the {info.file_size} bytes its entry declares "
                          f"(a damaged archive or a decompression bomb); stopped reading. {self.DAMAGED}")

    def _plain(self, info, where) -> bytearray:
        buf = bytearray()
        with self.zip.open(info) as fh:  # deflate output per read is bounded; CRC checked at the end
            while chunk := fh.read(_CHUNK):
                buf += chunk
                if len(buf) > info.file_size:
                    raise self._too_big(info, where)
        return buf

    def _zstd(self, info, where) -> bytearray:
        """zstd members are decompressed here (Python's zipfile reads them only
        from 3.14 on), streamed from the file in 1 MiB steps with the declared
        size as a hard cap: a frame header that claims more content is not
        trusted, and neither the compressed nor the inflated data is held
        beyond the member's own bytes."""
        import zstandard
        with open(self.path, "rb") as fh:
            fh.seek(info.header_offset)
            header = fh.read(_LOCAL_HEADER)
            if len(header) < _LOCAL_HEADER or header[:4] != b"PK\x03\x04":
                raise DamagedArchive(f"{where}: bad local header. {self.DAMAGED}")
            name_len, extra_len = struct.unpack("<HH", header[26:30])
            fh.seek(info.header_offset + _LOCAL_HEADER + name_len + extra_len)
            source = _Compressed(fh, info.compress_size)
            reader = zstandard.ZstdDecompressor().stream_reader(source, read_size=_CHUNK,
                                                                read_across_frames=True)
            buf, crc = bytearray(), 0
            while chunk := reader.read(_CHUNK):
                buf += chunk
                if len(buf) > info.file_size:
                    raise self._too_big(info, where)
                crc = zlib.crc32(chunk, crc)
            if source.short:
                raise DamagedArchive(f"{where}: the compressed data is cut short. {self.DAMAGED}")
        if len(buf) == info.file_size and crc != info.CRC:
            raise DamagedArchive(f"{where}: bad CRC-32 (the data does not match its checksum). {self.DAMAGED}")
        return buf
