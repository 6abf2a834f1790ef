//! Sparse data per index of the object table: the one paged array under the sub-object
//! links ([`Outers`](crate::outer::Outers)) and the side tables ([`SideTable`](crate::SideTable)).
//!
//! ```text
//!   index
//!     block = index / BLOCK_SLOTS        blocks: [(block 4, pages), (block 9, pages)]  sorted
//!     page  = (index % BLOCK_SLOTS) / P      pages:  [None, Some(page), None, …]
//!     i     = index % P                        page:  P × T, allocated on first write
//! ```
//!
//! A class's objects fill its range of the table front to back, so data kept per object
//! fills few pages; a page is allocated the first time one of its indices is written, and
//! only the blocks written to have a directory, so data for a few objects of a class whose
//! range starts at index 4 Mi is one page, not 4 Mi entries. An index in a page never
//! written has no entry: readers treat it as the array's fill value.

use std::iter::Enumerate;
use std::{mem, slice};

use crate::table::BLOCK_SLOTS;

/// `P` entries, allocated on first write.
type Page<T, const P: usize> = Box<[T; P]>;

/// The pages of one block of the table's index space (`BLOCK_SLOTS` indices).
#[derive(Clone, Debug)]
pub(crate) struct Block<T, const P: usize> {
    /// `index / BLOCK_SLOTS` of the block's indices.
    number: u32,
    /// By page within the block, up to the last page written.
    pages: Vec<Option<Page<T, P>>>,
}

/// An array over the table's index space in pages of `P` entries, each made of `fill()` when
/// one of its indices is first written: data kept per object, apart from the object table
/// (the sub-object links, the side tables, the collector's cluster membership). `P` divides
/// [`BLOCK_SLOTS`].
#[derive(Clone, Debug)]
pub struct Paged<T, const P: usize> {
    /// Sorted by block number; most arrays have one or two (a class's range, and the
    /// permanent pool's block).
    blocks: Vec<Block<T, P>>,
    fill: fn() -> T,
}

/// Where `index` lives: its block number, its page within the block, and its entry.
#[inline(always)]
const fn split<const P: usize>(index: u32) -> (u32, usize, usize) {
    let within = index as usize % BLOCK_SLOTS;
    ((index as usize / BLOCK_SLOTS) as u32, within / P, within % P)
}

impl<T, const P: usize> Paged<T, P> {
    /// An empty array whose pages start as `fill()` in every entry.
    pub const fn new(fill: fn() -> T) -> Self {
        const { assert!(BLOCK_SLOTS % P == 0, "a page never straddles two blocks") };
        Self { blocks: Vec::new(), fill }
    }

    /// The entry of `index`, if its page was ever written.
    #[inline]
    pub fn get(&self, index: u32) -> Option<&T> {
        let (number, page, i) = split::<P>(index);
        let block = self.blocks.iter().find(|b| b.number == number)?;
        Some(&block.pages.get(page)?.as_ref()?[i])
    }

    /// The entry of `index`, mutably, if its page was ever written.
    #[inline]
    pub fn get_mut(&mut self, index: u32) -> Option<&mut T> {
        let (number, page, i) = split::<P>(index);
        let block = self.blocks.iter_mut().find(|b| b.number == number)?;
        Some(&mut block.pages.get_mut(page)?.as_mut()?[i])
    }

    /// The entry of `index`, its block and page allocated if they were not.
    pub fn get_or_insert(&mut self, index: u32) -> &mut T {
        let (number, page, i) = split::<P>(index);
        let at = match self.blocks.binary_search_by_key(&number, |b| b.number) {
            Ok(at) => at,
            Err(at) => {
                self.blocks.insert(at, Block { number, pages: Vec::new() });
                at
            }
        };
        let pages = &mut self.blocks[at].pages;
        if pages.len() <= page {
            pages.resize_with(page + 1, || None);
        }
        let fill = self.fill;
        let entries = pages[page].get_or_insert_with(|| {
            let entries: Box<[T]> = (0..P).map(|_| fill()).collect();
            entries.try_into().unwrap_or_else(|_| unreachable!("a slice of P entries"))
        });
        &mut entries[i]
    }

    /// Every entry of every page, `fill` again; the pages stay allocated.
    pub(crate) fn refill(&mut self) {
        for entries in self.blocks.iter_mut().flat_map(|b| b.pages.iter_mut().flatten()) {
            entries.iter_mut().for_each(|entry| *entry = (self.fill)());
        }
    }

    /// Frees the pages whose every entry `unused` says holds nothing (and the blocks left
    /// with no page), and the directories' spare room.
    pub fn free_unused(&mut self, unused: impl Fn(&T) -> bool) {
        for block in &mut self.blocks {
            for page in &mut block.pages {
                if page.as_ref().is_some_and(|entries| entries.iter().all(&unused)) {
                    *page = None;
                }
            }
            while block.pages.last().is_some_and(Option::is_none) {
                block.pages.pop();
            }
            block.pages.shrink_to_fit();
        }
        self.blocks.retain(|b| !b.pages.is_empty());
        self.blocks.shrink_to_fit();
    }

    /// Bytes of the pages allocated for indices `start..start + len` (a class's range).
    pub(crate) fn bytes_in(&self, start: u32, len: u32) -> usize {
        let end = start as usize + len as usize;
        let pages = self.blocks.iter().flat_map(|b| {
            let base = b.number as usize * BLOCK_SLOTS;
            b.pages.iter().enumerate().filter(move |(p, page)| {
                let first = base + p * P;
                page.is_some() && first < end && first + P > start as usize
            })
        });
        pages.count() * mem::size_of::<[T; P]>()
    }

    /// Bytes the array holds on the heap: its pages, their directories and its block list.
    pub fn heap_bytes(&self) -> usize {
        let pages = self.blocks.iter().flat_map(|b| b.pages.iter().flatten()).count();
        let directories: usize = self.blocks.iter().map(|b| b.pages.capacity()).sum();
        pages * mem::size_of::<[T; P]>()
            + directories * mem::size_of::<Option<Page<T, P>>>()
            + self.blocks.capacity() * mem::size_of::<Block<T, P>>()
    }

    /// Every entry of every allocated page with its index, in index order.
    pub(crate) fn iter(&self) -> Entries<slice::Iter<'_, Block<T, P>>> {
        Entries { blocks: self.blocks.iter(), pages: None, page: None }
    }

    /// [`iter`](Self::iter), mutably.
    pub(crate) fn iter_mut(&mut self) -> Entries<slice::IterMut<'_, Block<T, P>>> {
        Entries { blocks: self.blocks.iter_mut(), pages: None, page: None }
    }
}

/// A block lent shared or mutably: what [`Entries`] needs of it to walk its entries either
/// way with one body.
pub(crate) trait Lent: Sized {
    /// The block's pages, in order.
    type Pages: Iterator<Item = Self::Page>;
    /// One page's slot in the directory.
    type Page;
    /// One page's entries, in order.
    type Entries: Iterator<Item = Self::Entry>;
    /// One entry.
    type Entry;
    /// Entries per page.
    const PAGE: usize;
    /// The block's number and its pages.
    fn open(self) -> (u32, Self::Pages);
    /// The page's entries, if it was allocated.
    fn entries(page: Self::Page) -> Option<Self::Entries>;
}

impl<'a, T, const P: usize> Lent for &'a Block<T, P> {
    type Pages = slice::Iter<'a, Option<Page<T, P>>>;
    type Page = &'a Option<Page<T, P>>;
    type Entries = slice::Iter<'a, T>;
    type Entry = &'a T;
    const PAGE: usize = P;
    fn open(self) -> (u32, Self::Pages) {
        (self.number, self.pages.iter())
    }
    fn entries(page: Self::Page) -> Option<Self::Entries> {
        page.as_ref().map(|entries| entries.iter())
    }
}

impl<'a, T, const P: usize> Lent for &'a mut Block<T, P> {
    type Pages = slice::IterMut<'a, Option<Page<T, P>>>;
    type Page = &'a mut Option<Page<T, P>>;
    type Entries = slice::IterMut<'a, T>;
    type Entry = &'a mut T;
    const PAGE: usize = P;
    fn open(self) -> (u32, Self::Pages) {
        (self.number, self.pages.iter_mut())
    }
    fn entries(page: Self::Page) -> Option<Self::Entries> {
        page.as_mut().map(|entries| entries.iter_mut())
    }
}

/// The walk over a [`Paged`] array's entries, with their indices, shared or mutable (as
/// its blocks are lent).
pub(crate) struct Entries<B: Iterator<Item: Lent>> {
    blocks: B,
    /// The current block's first index and pages.
    pages: Option<(usize, Enumerate<<B::Item as Lent>::Pages>)>,
    /// The current page's first index and entries.
    page: Option<(usize, Enumerate<<B::Item as Lent>::Entries>)>,
}

impl<B: Iterator<Item: Lent>> Iterator for Entries<B> {
    type Item = (u32, <B::Item as Lent>::Entry);

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some((first, entries)) = &mut self.page {
                if let Some((i, entry)) = entries.next() {
                    return Some(((*first + i) as u32, entry));
                }
                self.page = None;
            }
            if let Some((base, pages)) = &mut self.pages {
                match pages.next() {
                    Some((p, page)) => {
                        let first = *base + p * <B::Item as Lent>::PAGE;
                        self.page = <B::Item as Lent>::entries(page).map(|e| (first, e.enumerate()));
                        continue;
                    }
                    None => self.pages = None,
                }
            }
            let (number, pages) = self.blocks.next()?.open();
            self.pages = Some((number as usize * BLOCK_SLOTS, pages.enumerate()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: usize = 2048;

    #[test]
    fn a_paged_array_allocates_only_the_pages_written() {
        let mut paged: Paged<u32, P> = Paged::new(|| u32::MAX);
        assert_eq!(paged.get(5_000_000), None, "never written: no page");
        *paged.get_or_insert(3 * P as u32 + 7) = 42;
        *paged.get_or_insert(3 * P as u32 + 8) = 43;
        assert_eq!((paged.get(3 * P as u32 + 7), paged.get(3 * P as u32 + 8)), (Some(&42), Some(&43)));
        assert_eq!(paged.get(3 * P as u32 + 9), Some(&u32::MAX), "an unwritten index of an allocated page");
        assert_eq!(paged.get(2 * P as u32), None, "an index of an unallocated page below");
        let page = P * 4;
        assert_eq!(paged.bytes_in(0, 4 * P as u32), page, "one page of four");
        assert_eq!(paged.bytes_in(0, 3 * P as u32), 0, "the range stops before the page");
        assert_eq!(paged.bytes_in(4 * P as u32, P as u32), 0, "a range beyond the pages");
    }

    #[test]
    fn blocks_are_sparse_and_the_walk_gives_every_entry_its_index_in_order() {
        let mut paged: Paged<Option<u32>, 256> = Paged::new(|| None);
        let far = 9 * BLOCK_SLOTS as u32 + 300;
        *paged.get_or_insert(far) = Some(1);
        *paged.get_or_insert(5) = Some(2);
        *paged.get_or_insert(4 * BLOCK_SLOTS as u32) = Some(3);
        assert_eq!(paged.heap_bytes() / 1024, 3 * 256 * 8 / 1024, "three pages, not the indices below");
        let written: Vec<_> = paged.iter().filter_map(|(i, v)| v.map(|v| (i, v))).collect();
        assert_eq!(written, [(5, 2), (4 * BLOCK_SLOTS as u32, 3), (far, 1)]);
        assert_eq!(paged.iter().count(), 3 * 256, "every entry of the allocated pages");
        for (i, v) in paged.iter_mut() {
            if let Some(v) = v {
                *v += i;
            }
        }
        assert_eq!(paged.get(5), Some(&Some(7)));
        assert_eq!(paged.get_mut(far).map(|v| v.take()), Some(Some(1 + far)));
        paged.free_unused(Option::is_none);
        assert_eq!(paged.iter().filter(|(_, v)| v.is_some()).count(), 2);
        assert_eq!(paged.iter().count(), 2 * 256, "the emptied page is freed");
        paged.refill();
        assert!(paged.iter().all(|(_, v)| v.is_none()), "refilled, the pages kept");
        assert_eq!(paged.iter().count(), 2 * 256);
    }
}
