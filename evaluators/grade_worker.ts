// Worker side of the grading pool: the real grader behind `serveBatches` (worker_serve.ts).
import { grade } from "./grade.ts";
import { serveBatches } from "./worker_serve.ts";

if (import.meta.main) serveBatches(grade);
