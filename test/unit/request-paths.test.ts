import assert from 'node:assert/strict';
import { test } from 'node:test';

import type * as z from 'zod';

import { channels, type ChannelName } from '../../core/api/channels';
import { REQUEST_PATHS } from '../../main/request-paths';

/** Fields that look like paths but name nothing the host opens. */
const NOT_OPENED: Partial<Record<ChannelName, string[]>> = {
  // Which file a draft belongs to, stored with it; opening that file is a files.read of its own. The plan kept with
  // it is data until it runs, when its paths are checked as any plan's.
  'drafts.save': ['path', 'plan'],
  // A plan saved as data: the paths in it are checked when it is run, read or bundled.
  'plans.write': ['plan'],
};

const PATH_LIKE = /(^|[a-z])(path|Path|dir|cwd)$|^plan$|^options$/;

function fieldsOf(schema: z.ZodType): string[] {
  const s = schema as unknown as { shape?: Record<string, unknown>; options?: z.ZodType[] };
  if (s.shape) return Object.keys(s.shape);
  if (s.options) return [...new Set(s.options.flatMap(fieldsOf))];
  return [];
}

test('every request field that names a path is in the table the serve host confines', () => {
  const missing: string[] = [];
  for (const channel of Object.keys(channels) as ChannelName[]) {
    for (const field of fieldsOf(channels[channel].request as z.ZodType)) {
      if (!PATH_LIKE.test(field) || NOT_OPENED[channel]?.includes(field)) continue;
      if (!REQUEST_PATHS[channel]?.[field]) missing.push(`${channel}.${field}`);
    }
  }
  assert.deepEqual(missing, []);
});

test('the table names only fields the channel map has', () => {
  for (const [channel, fields] of Object.entries(REQUEST_PATHS)) {
    const known = fieldsOf(channels[channel as ChannelName].request as z.ZodType);
    for (const field of Object.keys(fields!)) assert.ok(known.includes(field), `${channel}.${field}`);
  }
});
