/** Public API of evaluators/ (filled in by its issue). */
export {};
