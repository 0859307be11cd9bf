"""The child process that turns one document into Markdown (run by ``convert.py``).

Run as a script, not through the ``pronghorn`` package (``python -I convert_worker.py EXT
MEMORY_BYTES CPU_SECONDS``), so it needs only the standard library and ``markitdown``. It
lowers its own limits before it reads a byte of the document: address space, CPU time, no
file may be written, no core dump. The document comes on stdin; the Markdown goes to
stdout; a failure is one line on stderr and exit status 1 (``2`` for a bad command line).

The converter is chosen by the extension alone (the one for DOCX, PDF…), never by sniffing
the content, so a file named ``.docx`` is read as a DOCX or fails.
"""

from __future__ import annotations

import io
import os
import resource
import sys

# extension -> name of the markitdown converter class for it
CONVERTERS = {
    "pdf": "PdfConverter",
    "docx": "DocxConverter",
    "xlsx": "XlsxConverter",
    "pptx": "PptxConverter",
    "html": "HtmlConverter",
    "htm": "HtmlConverter",
    "epub": "EpubConverter",
}
MAX_ERROR_CHARS = 300
# Numeric libraries markitdown imports (numpy's OpenBLAS, onnxruntime) start a thread pool per
# core, each with its own buffers: on two cores that alone passed 256 MiB of address space.
# One thread each keeps a conversion's memory independent of the machine's core count.
ONE_THREAD = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
# A failure while the address space stood this close to its limit is the limit's doing,
# whatever the exception says (C extensions report a failed allocation as SystemError,
# ImportError "failed to map segment"...).
NEAR_LIMIT = 0.85
RESERVE_BYTES = 16 * 1024 * 1024


def limit(memory_bytes: int, cpu_seconds: int) -> None:
    """Hard limits this process (and anything it starts) cannot raise again."""
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def convert(data: bytes, ext: str) -> str:
    from markitdown import DocumentConverter, StreamInfo, converters

    converter: DocumentConverter = getattr(converters, CONVERTERS[ext])()
    info = StreamInfo(extension=f".{ext}")
    result = converter.convert(io.BytesIO(data), info)
    return str(result.markdown or "")


def peak_bytes() -> int:
    """The most address space this process has held (VmPeak), 0 when it cannot be read."""
    try:
        with open("/proc/self/status", "rb") as status:
            for line in status:
                if line.startswith(b"VmPeak:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def short_error(exc: BaseException, memory_bytes: int) -> str:
    """One line naming what went wrong, without a traceback or the document's bytes."""
    if isinstance(exc, MemoryError) or peak_bytes() >= NEAR_LIMIT * memory_bytes:
        return "the converter ran out of memory"
    text = " ".join(str(exc).split())
    text = text.split(" Traceback ", 1)[0]
    if len(text) > MAX_ERROR_CHARS:
        text = text[: MAX_ERROR_CHARS - 1] + "…"
    name = type(exc).__name__
    return f"{name}: {text}" if text else name


def main(argv: list[str]) -> int:
    if len(argv) != 4 or argv[1] not in CONVERTERS:
        print("usage: convert_worker.py EXT MEMORY_BYTES CPU_SECONDS", file=sys.stderr)
        return 2
    ext, memory_bytes = argv[1], int(argv[2])
    for name in ONE_THREAD:
        os.environ[name] = "1"
    limit(memory_bytes, int(argv[3]))
    # Room to report a failure in: at the limit even opening /proc or printing fails.
    reserve: bytearray | None = bytearray(RESERVE_BYTES)
    try:
        markdown = convert(sys.stdin.buffer.read(), ext)
    except BaseException as exc:  # every failure becomes one line
        reserve = None
        print(short_error(exc, memory_bytes), file=sys.stderr)
        return 1
    del reserve
    sys.stdout.buffer.write(markdown.encode("utf-8", "replace"))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
