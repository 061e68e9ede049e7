// Part 2 of 2 of the walk through every chapter of the project's book
// (tests/e2e/book-chapters.mjs): two files so that the test runner runs the
// halves in parallel (issue 61). Needs `make build`.
import { chapterWalk } from './book-chapters.mjs';

chapterWalk(1, 2);
