"""The five papers dcnlab reproduces, cited as a reader would look them up.

Each paper keeps the id the project gives it (``"000"`` .. ``"004"``) as a short label: the ids name the
reproductions' parts (``003-k``), the headlines of ``summary.json`` and the report's tables. Everything
else here is what the papers' text prints: authors, title, English title, journal, year, volume(issue),
pages. The texts at hand are extractions that lost some of it, so a field the text does not print is
``None`` and the formatted reference says so, never a guess:

* **000** prints its title and affiliations, but of the author line only the first name survives (the
  other names are lost around the affiliation markers "1) 1)"), and no journal line.
* **001** prints its authors and affiliation but no title and no journal line; the reference names the
  method as the abstract does.
* **002** prints its title and authors (the fourth author's given name is garbled in the text); a library
  catalogue record of the same article (same title, authors and abstract) gives that name, the English
  title, the journal, year, issue and pages: :attr:`Paper.record` says where.
* **003** is an English text without its title page (no title, no author line); a copy of the same
  article's first page (same abstract, word for word) gives title and authors: :attr:`Paper.record`.
  No journal line is printed in either.
* **004** prints the journal's own citation line (引用本文) in Chinese and English.

Docstrings and help texts cite a paper by its short form and section: ``"C-MR4LMS (Chen et al.), §4.2"``
(:func:`cite`); the report lists every full reference (:func:`reference`).

May import: nothing of dcnlab (it is data and formatting only).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Paper:
    """One paper: the fields its text prints (``None`` where it prints none)."""

    id: str
    """The project's label, ``"000"`` .. ``"004"``."""
    name: str
    """What the paper is about, in a few words: ``"Incast trees on BCube (M2)"``."""
    label: str
    """The method's name as the paper gives it, for short citations: ``"M2"``, ``"C-MR4LMS"``."""
    authors: tuple[str, ...]
    """Romanised, family name first in capitals as Chinese journals print them (``BIAN Qing-rong``);
    Western order for a paper written in English."""
    authors_original: tuple[str, ...] = ()
    """In the paper's script, as printed (empty for an English paper)."""
    more_authors: bool = False
    """The text shows only the first author(s): the reference adds "et al."."""
    title: str | None = None
    """The title in the paper's language."""
    title_en: str | None = None
    """The paper's own English title (None where none is printed)."""
    title_translated: str | None = None
    """Our translation of the title, where the paper prints no English one (marked as ours)."""
    subject: str | None = None
    """Where no title is printed: the method as the abstract names it."""
    journal: str | None = None
    """The journal's name in its own language."""
    journal_en: str | None = None
    year: int | None = None
    volume: str | None = None
    issue: str | None = None
    pages: str | None = None
    doi: str | None = None
    affiliation: str | None = None
    """Printed in the reference only when the journal is unknown, to help find the paper."""
    record: str | None = None
    """Where the fields the extracted text lacks were read (a public record of the same article)."""

    # -- formatting ------------------------------------------------------------------------------------------

    def first_author_family(self) -> str:
        """``"Bian"``, ``"Guo"``: the first author's family name, capitalised."""
        first = self.authors[0]
        if self.authors_original:        # Chinese order: family name first, written in capitals
            return first.split()[0].capitalize()
        return first.split()[-1]

    def who(self) -> str:
        """``"Bian et al."``; ``"Li and Wang"`` for two authors."""
        if len(self.authors) > 2 or self.more_authors:
            return f"{self.first_author_family()} et al."
        return " and ".join(a.split()[0].capitalize() if self.authors_original else a.split()[-1]
                            for a in self.authors)

    def short(self) -> str:
        """``"Bian et al., 2022"``; ``"Fang et al."`` where the year is not printed."""
        return f"{self.who()}, {self.year}" if self.year else self.who()

    def cite(self, where: str = "") -> str:
        """``"Dragonfly CISTs (Bian et al., Computer Science 2022), §3.1"``: the method, who and where it
        was published, and the section (``where``, optional)."""
        venue = " ".join(x for x in (self.journal_en or self.journal, str(self.year) if self.year else None) if x)
        inner = f"{self.who()}, {venue}" if venue else self.who()
        return f"{self.label} ({inner})" + (f", {where}" if where else "")

    def title_text(self) -> str:
        """The title as a reference shows it: original, then the English title in brackets."""
        if self.title is None and self.title_en is None:
            return f"[title not printed in the text; the paper presents {self.subject}]"
        parts = [self.title or self.title_en or ""]
        if self.title and self.title_en:
            parts.append(f"[{self.title_en}]")
        elif self.title and self.title_translated:
            parts.append(f"[{self.title_translated}; our translation, the paper prints no English title]")
        return " ".join(parts)

    def where_published(self) -> str:
        """``"计算机科学 (Computer Science), 2022, 49(11): 284-292"``, or what the text lacks."""
        if not self.journal and not self.journal_en:
            missing = "Journal, year and pages not printed in the text"
            return f"{self.affiliation}. {missing}" if self.affiliation else missing
        name = self.journal or ""
        if self.journal_en and self.journal_en != name:
            name = f"{name} ({self.journal_en})" if name else self.journal_en
        out = name + (f", {self.year}" if self.year else "")
        if self.volume:
            out += f", {self.volume}" + (f"({self.issue})" if self.issue else "")
        elif self.issue:                 # no volume printed: year(issue), as GB/T 7714 writes it
            out += f"({self.issue})"
        if self.pages:
            out += f": {self.pages}"
        if self.doi:
            out += f". DOI {self.doi}"
        return out

    def reference(self) -> str:
        """The full reference, in the style of the papers' own citation lines."""
        names = ", ".join(self.authors) + (", et al." if self.more_authors else "")
        if self.authors_original:
            names += " (" + ", ".join(self.authors_original) + (" …" if self.more_authors else "") + ")"
        return f"{names}. {self.title_text()}. {self.where_published()}."

    def to_json(self) -> dict[str, Any]:
        """The fields the text gives (None left out), with the formatted reference: ``summary.json``'s
        ``papers``."""
        out = {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(self).items()
               if v not in (None, (), False)}
        out["reference"] = self.reference()
        out["short"] = self.short()
        return out


PAPERS: dict[str, Paper] = {p.id: p for p in (
    Paper(
        id="000", name="Incast trees on BCube (M2)", label="M2",
        authors=("FANG Xing",), authors_original=("方兴",), more_authors=True,
        title="数据中心网络高效数据汇聚传输算法",
        title_translated="Efficient data aggregation transfer algorithms for data-center networks",
        affiliation="数学工程与先进计算国家重点实验室 江苏无锡 214125; 解放军信息工程大学国家数字交换系统工程技术研究中心 "
                    "郑州 450002; 信息系统工程国防科技重点实验室(国防科学技术大学) 长沙 410073"),
    Paper(
        id="001", name="Multicast with a limited table on fat-trees (C-MR4LMS)", label="C-MR4LMS",
        authors=("CHEN Shuping", "LI Yi", "HE Wangquan", "QI Fengbin"),
        authors_original=("陳淑平", "李祎", "何王全", "漆鋒濱"),
        subject="C-MR4LMS, \"customized multicast routing for limited multicast forwarding table size\", "
                "for fat-trees",
        affiliation="江南計算技術研究所 江蘇無錫 214083"),
    Paper(
        id="002", name="Tenant bandwidth partitioning with InfiniBand congestion control",
        label="IB CC partitioning",
        authors=("ZHANG Ziwen", "LÜ Gaofeng", "SUN Zhigang", "WANG Chengjun", "LU Xicheng"),
        authors_original=("张子文", "吕高锋", "孙志刚", "王珵珺", "卢锡城"),
        title="面向InfiniBand数据中心的区别化传输层带宽划分机制",
        title_en="Differentiated Transport-Layer Network Bandwidth Allocation for InfiniBand Datacenter",
        journal="计算机学报", journal_en="Chinese Journal of Computers", year=2012, issue="12",
        pages="2505-2514",
        affiliation="国防科学技术大学计算机学院 长沙 410073",
        record="library catalogue record of the article, http://202.203.159.49:8080/article/detail.aspx?id=44609626 "
               "(fourth author's given name, English title, journal, year, issue, pages)"),
    Paper(
        id="003", name="Shuffle aggregation on BCube (IRS/SRS)", label="IRS/SRS",
        authors=("Deke Guo", "Junjie Xie", "Xiaomin Zhu", "Wei Wei"),
        title="Exploiting Efficient and Scalable Shuffle Transfers in Future Data Center Networks",
        record="the article's first page, https://www.readkong.com/page/exploiting-ef-cient-and-scalable-"
               "shuf-e-transfers-in-future-8691101 (title and authors)"),
    Paper(
        id="004", name="Completely independent spanning trees on Dragonfly", label="Dragonfly CISTs",
        authors=("BIAN Qing-rong", "CHENG Bao-lei", "FAN Jian-xi", "PAN Zhi-yong"),
        authors_original=("卞庆荣", "程宝雷", "樊建席", "潘志勇"),
        title="蜻蜓网络上完全独立生成树的构造算法",
        title_en="Construction Algorithm of Completely Independent Spanning Tree in Dragonfly Network",
        journal="计算机科学", journal_en="Computer Science", year=2022, volume="49", issue="11",
        pages="284-292",
        affiliation="School of Computer Science and Technology, Soochow University, Suzhou, Jiangsu 215006, China"),
)}
"""The five papers by id."""


def paper(pid: str) -> Paper:
    """The paper with id ``pid`` (``"000"`` .. ``"004"``); ``KeyError`` naming the valid ids otherwise."""
    try:
        return PAPERS[pid]
    except KeyError:
        raise KeyError(f"no paper {pid!r}: the papers are {', '.join(PAPERS)}") from None


def cite(pid: str, where: str = "") -> str:
    """``"C-MR4LMS (Chen et al.), §4.2"``: :meth:`Paper.cite` of paper ``pid``."""
    return paper(pid).cite(where)


def short(pid: str) -> str:
    """``"Bian et al., 2022"``: :meth:`Paper.short` of paper ``pid``."""
    return paper(pid).short()


def reference(pid: str) -> str:
    """The full reference of paper ``pid``: :meth:`Paper.reference`."""
    return paper(pid).reference()


def heading(pid: str) -> str:
    """``"003: Shuffle aggregation on BCube (IRS/SRS), Guo et al."``: a section heading for one paper."""
    p = paper(pid)
    return f"{p.id}: {p.name}, {p.short()}"
