// The default text of the character-level data sets: original prose written for prism (no
// quotation from any other work), free to use like the rest of the code. About 5 KB, enough
// for a small model to learn spelling, spacing and some common words within a few minutes.
#include "nn/data/text.h"

namespace prism::nn::data {

namespace {

constexpr const char kText[] = R"(The Keeper of the Northern Light

On the last rock before the open sea there stood a lighthouse, and in the lighthouse lived a keeper named Ansel. He was not a young man, and he was not an old one either. He had the kind of face that the wind had been working on for a long time without finishing.

Every evening, an hour before the sun went down, Ansel climbed the one hundred and twelve steps to the lamp room. He counted them out loud, not because he was afraid of losing count, but because the sound of his own voice in the stairwell kept him company. At the top he trimmed the wick, wiped the great glass lens with a soft cloth, and wound the clockwork that turned the light. Then he sat by the window with a cup of tea and watched the first ships come round the headland.

The ships did not know him. They knew only the light: two long flashes and one short, every twenty seconds, all night long. A sailor who saw that pattern knew exactly where he was, and knew that the rocks were close, and turned his wheel a little to the south. In this way Ansel spoke to hundreds of people he would never meet, and each of them answered by going safely home.

One winter the clockwork began to slow down. At first the change was so small that only Ansel noticed it. The long flashes grew a little longer, and the pause between them stretched by half a breath. He oiled every gear and tightened every screw, but the light went on slowing, the way a tired walker slows at the end of a long day.

So he wrote a letter to the clockmaker in the town across the bay. The clockmaker was a careful woman named Tilde, who had repaired every clock in the town at least twice and had opinions about all of them. She came out on the supply boat with a small wooden box of tools and a large wool coat, and she did not say very much until she had climbed the stairs.

In the lamp room she knelt beside the clockwork and listened to it for a long time. Then she took out a pencil and a notebook and began to write numbers: the size of each wheel, the number of its teeth, the weight that drove it, the time it took to turn once. Ansel watched her and said nothing. He had always thought of the machine as something that simply worked or did not work. He had never thought of it as a sum.

"Here is your trouble," Tilde said at last, and tapped the notebook. "The weight is the same as it always was, and the gears are clean. But the cold has thickened the oil in the bearing at the bottom, and that bearing turns fastest of all. A small drag on the fastest wheel costs more than a large drag on the slowest one. You have been looking everywhere except where the time goes."

She warmed the bearing with her hands, cleaned out the old oil and put in a thinner one that would not stiffen in the frost. Then she wound the clock, and the two of them stood in the dark and counted. Two long flashes and one short. Twenty seconds, exactly.

Ansel asked her how she had known which wheel to look at. She laughed and said that she had not known. She had measured. A guess, she said, is only a question that has not been checked yet. You write down what each part costs, you add it up, and the answer tells you where to look. Most of the time it is not where you expected.

After she went home, Ansel kept a notebook of his own. He wrote down how long the oil took to warm on cold nights, how many minutes the wick burned before it needed trimming, and how the light looked through fog and through rain. Some of the numbers were dull and some were surprising, and a few of them changed the way he did his work. He began to trim the wick earlier on windy nights, because he had measured that it burned faster then. He moved the lamp oil to a warmer shelf.

Years later, a young woman came to learn the work from him. On her first evening she asked what she should study. Ansel handed her the notebook and told her to start a new page.

"You will not learn the light by reading about it," he said. "You will learn it by watching it closely and writing down what you see. Measure first, then change one thing, then measure again. If the number does not move, you were wrong about the cause, and that is worth knowing too."

She did as he said. In time she knew the lighthouse better than he did, and she found things he had missed: a draught under the door that cooled the stairwell, a lens that was a little out of line, a better way to store the wicks. Each discovery was small. Together they made the light a little steadier and a little brighter, and the ships that passed on stormy nights never knew the difference, which was exactly the point.

On clear evenings the two keepers sat by the window with their tea and watched the ships come round the headland, one after another, each of them trusting a light it could not explain. The sea was wide and dark and patient. The light went round and round, two long flashes and one short, and the notebook on the table grew a page thicker every week.
)";

}  // namespace

std::string_view default_text() {
  return std::string_view(kText, sizeof(kText) - 1);
}

}  // namespace prism::nn::data
