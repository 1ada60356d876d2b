import { describe, expect, it } from 'vitest';
import { flattenOntoWhite, orient } from '$lib/adapters/images/pixels';

describe('orient', () => {
  // Stored 3 × 2:  a b c / d e f. Each pixel's red channel names it.
  const stored = {
    data: new Uint8ClampedArray([...'abcdef'].flatMap((c) => [c.charCodeAt(0), 0, 0, 255])),
    width: 3,
    height: 2,
  };
  const rows = ({ data, width }: { data: Uint8ClampedArray; width: number }) => {
    const names = [...data.filter((_, i) => i % 4 === 0)].map((n) => String.fromCharCode(n)).join('');
    return names.match(new RegExp(`.{${width}}`, 'g'))!.join('/');
  };

  it.each([
    [1, 'abc/def'],
    [2, 'cba/fed'],
    [3, 'fed/cba'],
    [4, 'def/abc'],
    [5, 'ad/be/cf'],
    [6, 'da/eb/fc'],
    [7, 'fc/eb/da'],
    [8, 'cf/be/ad'],
  ])('EXIF orientation %i shows %s', (orientation, upright) => {
    const out = orient(stored, orientation);
    expect(rows(out)).toBe(upright);
    expect([out.width, out.height]).toEqual(orientation >= 5 ? [2, 3] : [3, 2]);
  });
});

it('flattenOntoWhite composites onto white in place', () => {
  const data = new Uint8ClampedArray([0, 0, 0, 0, 255, 0, 0, 128, 10, 20, 30, 255, 0, 0, 0, 1]);
  flattenOntoWhite(data);
  expect([...data]).toEqual([255, 255, 255, 255, 255, 127, 127, 255, 10, 20, 30, 255, 254, 254, 254, 255]);
});
