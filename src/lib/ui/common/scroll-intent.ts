/**
 * Tells a scroll the person made from one the page made. A virtual list moves the scroll position
 * itself as it measures rows; only the person's wheel, touch, keys or scrollbar drag should let a
 * conversation stop following its newest message or read another page.
 */
export class ScrollIntent {
  #at = -Infinity;
  #held = false;

  /** The person moved the view within the last second (or is dragging it). */
  get recent(): boolean {
    return this.#held || performance.now() - this.#at < 1000;
  }

  /** An attachment for the scroller. */
  readonly watch = (node: HTMLElement): (() => void) => {
    const mark = () => (this.#at = performance.now());
    const press = () => (this.#held = true);
    const release = () => {
      if (this.#held) mark();
      this.#held = false;
    };
    const marks = ['wheel', 'touchmove', 'keydown'] as const;
    for (const type of marks) node.addEventListener(type, mark, { passive: true });
    node.addEventListener('pointerdown', press);
    window.addEventListener('pointerup', release);
    return () => {
      for (const type of marks) node.removeEventListener(type, mark);
      node.removeEventListener('pointerdown', press);
      window.removeEventListener('pointerup', release);
    };
  };
}
