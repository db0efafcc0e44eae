// Box annotations read from text: the same boxes written by hand in YOLO, COCO and Pascal VOC
// read alike (pixel coordinates worked out below), clipping at the image's edges, every refusal
// named by line or JSON path, class names from data.yaml and names files, and the small XML
// reader's comments, entities, CDATA and refusals.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "data/box_formats.h"
#include "test_support.h"

using namespace netsmith;
using namespace netsmith::data;
using testutil::errorOf;

namespace {

#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

const std::vector<std::string> kCatDog{"cat", "dog"};

// A 40 x 30 image with two boxes, in pixels (x0, y0 inclusive; x1, y1 one past the last pixel):
//   A, a dog: pixel columns 4..15, rows 2..9    -> x0 4, y0 2, x1 16, y1 10
//   B, a cat: pixel columns 20..39, rows 10..29 -> x0 20, y0 10, x1 40, y1 30 (at the corner)
const std::vector<target::Box> kTwoBoxes{{1, 4, 2, 16, 10}, {0, 20, 10, 40, 30}};

// YOLO: class, then centre and size as fractions of the image's width (40) and height (30).
//   A: cx = (4 + 16) / 2 / 40 = 0.25, cy = (2 + 10) / 2 / 30 = 0.2,
//      w = 12 / 40 = 0.3, h = 8 / 30 = 0.26666667
//   B: cx = (20 + 40) / 2 / 40 = 0.75, cy = (10 + 30) / 2 / 30 = 0.66666667,
//      w = 20 / 40 = 0.5, h = 20 / 30 = 0.66666667
const std::string kTwoBoxesYolo =
    "1 0.25 0.2 0.3 0.26666667\n"
    "\n"
    "0 0.75 0.66666667 0.5 0.66666667\n";

// COCO: bbox [x, y, width, height] in pixels. A: [4, 2, 12, 8]; B: [20, 10, 20, 20]. The dog's
// category is listed first but has the larger id, so classes sorted by id are cat, dog.
std::string cocoJson(const std::string& images, const std::string& annotations) {
  return R"({"info": {"year": 2024}, "images": [)" + images + R"(], "annotations": [)" +
         annotations + R"(], "categories": [{"id": 7, "name": "dog"}, {"id": 3, "name": "cat"}]})";
}
const std::string kImage = R"({"id": 1, "file_name": "a.jpg", "width": 40, "height": 30})";
const std::string kTwoBoxesCoco =
    cocoJson(kImage,
             R"({"id": 10, "image_id": 1, "category_id": 7, "bbox": [4, 2, 12, 8]},
                {"id": 11, "image_id": 1, "category_id": 3, "bbox": [20, 10, 20, 20],
                 "iscrowd": 0, "area": 400, "segmentation": [[20, 10, 40, 10, 40, 30]]})");

// VOC: 1-based pixels with the last pixel included. A: xmin 5, ymin 3, xmax 16, ymax 10;
// B: xmin 21, ymin 11, xmax 40, ymax 30.
std::string vocObject(const std::string& name, int xmin, int ymin, int xmax, int ymax,
                      const std::string& extra = "") {
  return "  <object>\n    <name>" + name + "</name>\n" + extra + "    <bndbox><xmin>" +
         std::to_string(xmin) + "</xmin><ymin>" + std::to_string(ymin) + "</ymin><xmax>" +
         std::to_string(xmax) + "</xmax><ymax>" + std::to_string(ymax) +
         "</ymax></bndbox>\n  </object>\n";
}
// Line 1 <annotation>, 2 <filename>, 3 <size>, 4 the first <object>, 5 its <name>.
std::string vocXml(const std::string& objects) {
  return "<annotation>\n  <filename>a.jpg</filename>\n"
         "  <size><width>40</width><height>30</height><depth>3</depth></size>\n" +
         objects + "</annotation>\n";
}
const std::string kTwoBoxesVoc =
    vocXml(vocObject("dog", 5, 3, 16, 10) + vocObject("cat", 21, 11, 40, 30));

/// Boxes compared with a tolerance: YOLO's fractions are rounded in the file.
void expectBoxes(const std::vector<target::Box>& actual, const std::vector<target::Box>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    SCOPED_TRACE("box " + std::to_string(i));
    EXPECT_EQ(actual[i].cls, expected[i].cls);
    EXPECT_NEAR(actual[i].x0, expected[i].x0, 1e-4);
    EXPECT_NEAR(actual[i].y0, expected[i].y0, 1e-4);
    EXPECT_NEAR(actual[i].x1, expected[i].x1, 1e-4);
    EXPECT_NEAR(actual[i].y1, expected[i].y1, 1e-4);
    EXPECT_EQ(actual[i].crowd, expected[i].crowd);
    EXPECT_EQ(actual[i].difficult, expected[i].difficult);
  }
}

/// `depth` elements nested inside one another under <annotation> (the root is one more level).
std::string nestedVoc(int depth) {
  std::string text = "<annotation><size><width>40</width><height>30</height></size>\n";
  for (int i = 0; i < depth; ++i)
    text += "<x>";
  for (int i = 0; i < depth; ++i)
    text += "</x>";
  return text + "\n</annotation>\n";
}

}  // namespace

TEST(BoxFormats, TheSameBoxesReadAlikeFromYoloCocoAndVoc) {
  expectBoxes(parseYoloLabels(kTwoBoxesYolo, 40, 30, 2, "a.txt"), kTwoBoxes);

  const CocoDataset coco = parseCoco(kTwoBoxesCoco, {}, false, "coco.json");
  EXPECT_EQ(coco.categories, kCatDog);
  ASSERT_EQ(coco.images.size(), 1u);
  EXPECT_EQ(coco.images[0].id, 1);
  EXPECT_EQ(coco.images[0].file, "a.jpg");
  EXPECT_EQ(coco.images[0].width, 40);
  EXPECT_EQ(coco.images[0].height, 30);
  expectBoxes(coco.images[0].boxes, kTwoBoxes);
  EXPECT_TRUE(coco.skipped.empty());

  const VocAnnotation voc = parseVoc(kTwoBoxesVoc, kCatDog, "a.xml");
  EXPECT_EQ(voc.file, "a.jpg");
  EXPECT_EQ(voc.width, 40);
  EXPECT_EQ(voc.height, 30);
  expectBoxes(voc.boxes, kTwoBoxes);
}

TEST(BoxFormats, BoxesOverTheEdgeAreClippedAndOnesOutsideRefusedByLine) {
  // cx 0.95, w 0.2 of 40: x 34..42, clipped to 34..40; cy 0.5, h 0.4 of 30: y 9..21.
  expectBoxes(parseYoloLabels("0 0.95 0.5 0.2 0.4\n", 40, 30, 2, "a.txt"), {{0, 34, 9, 40, 21}});
  // cx 1.5: x 56..64, all of it right of the image.
  const std::string outside = errorOf(
      [] { parseYoloLabels("0 0.5 0.5 0.2 0.2\n0 1.5 0.5 0.2 0.2\n", 40, 30, 2, "a.txt"); });
  EXPECT_CONTAINS(outside, "a.txt line 2:");
  EXPECT_CONTAINS(outside, "outside the 40x30 image");

  // VOC and COCO boxes over the edge are clipped the same way.
  expectBoxes(parseVoc(vocXml(vocObject("cat", 31, 10, 45, 21)), kCatDog, "a.xml").boxes,
              {{0, 30, 9, 40, 21}});
  const CocoDataset coco =
      parseCoco(cocoJson(kImage, R"({"image_id": 1, "category_id": 3, "bbox": [-5, 9, 15, 12]})"),
                {}, false, "coco.json");
  expectBoxes(coco.images[0].boxes, {{0, 0, 9, 10, 21}});

  expectBoxes({clipBox({1, -3, 2, 50, 9}, 40, 30, "x")}, {{1, 0, 2, 40, 9}});
  EXPECT_CONTAINS(errorOf([] {
                    clipBox({1, 41, 2, 50, 9}, 40, 30, "b.txt line 4");
                  }),
                  "b.txt line 4: box (41, 2)-(50, 9) lies outside the 40x30 image");
}

TEST(BoxFormats, ZeroAreaBoxesAreRefusedByNameInEveryFormat) {
  const std::string yolo =
      errorOf([] { parseYoloLabels("1 0.5 0.5 0 0.2\n", 40, 30, 2, "a.txt"); });
  EXPECT_CONTAINS(yolo, "a.txt line 1:");
  EXPECT_CONTAINS(yolo, "zero area");

  // xmin 6, xmax 5: x0 = 5, x1 = 5.
  const std::string voc =
      errorOf([] { parseVoc(vocXml(vocObject("cat", 6, 3, 5, 10)), kCatDog, "a.xml"); });
  EXPECT_CONTAINS(voc, "a.xml line 6:");  // the <bndbox>
  EXPECT_CONTAINS(voc, "\"cat\"");
  EXPECT_CONTAINS(voc, "zero area");

  const std::string coco = errorOf([] {
    parseCoco(cocoJson(kImage, R"({"image_id": 1, "category_id": 3, "bbox": [4, 2, 0, 8]})"), {},
              false, "coco.json");
  });
  EXPECT_CONTAINS(coco, "coco.json: annotations[0].bbox:");
  EXPECT_CONTAINS(coco, "zero area");

  EXPECT_CONTAINS(errorOf([] {
                    clipBox({0, 5, 5, 5, 9}, 40, 30, "c.txt line 2");
                  }),
                  "c.txt line 2: box (5, 5)-(5, 9) has zero area");
}

TEST(BoxFormats, YoloLinesWithAnUnknownClassOtherFieldsOrNoNumberAreNamed) {
  EXPECT_TRUE(parseYoloLabels("", 40, 30, 2, "a.txt").empty());
  EXPECT_TRUE(parseYoloLabels("\n  \r\n\n", 40, 30, 2, "a.txt").empty());

  const std::string cls = errorOf(
      [] { parseYoloLabels("0 0.5 0.5 0.2 0.2\n\n2 0.5 0.5 0.2 0.2\n", 40, 30, 2, "a.txt"); });
  EXPECT_CONTAINS(cls, "a.txt line 3: class 2 is not one of the 2 classes");
  EXPECT_CONTAINS(errorOf([] { parseYoloLabels("-1 0.5 0.5 0.2 0.2", 40, 30, 2, "a.txt"); }),
                  "a.txt line 1: class -1");
  EXPECT_CONTAINS(errorOf([] { parseYoloLabels("x 0.5 0.5 0.2 0.2", 40, 30, 2, "a.txt"); }),
                  "the class \"x\" is not a whole number");
  EXPECT_CONTAINS(errorOf([] { parseYoloLabels("0 0.5 abc 0.2 0.2", 40, 30, 2, "a.txt"); }),
                  "a.txt line 1: cy \"abc\" is not a number");
  EXPECT_CONTAINS(errorOf([] { parseYoloLabels("0 0.5 0.5 0.2 nan", 40, 30, 2, "a.txt"); }),
                  "h \"nan\" is not a number");
  EXPECT_CONTAINS(errorOf([] { parseYoloLabels("0 0.5 0.5 0.2\n", 40, 30, 2, "a.txt"); }),
                  "a.txt line 1: 4 fields");
  const std::string polygon = errorOf([] {
    parseYoloLabels("0 0.5 0.5 0.2 0.2\n1 0.1 0.1 0.2 0.1 0.2 0.2\n", 40, 30, 2, "a.txt");
  });
  EXPECT_CONTAINS(polygon, "a.txt line 2:");
  EXPECT_CONTAINS(polygon, "segmentation polygon");
}

TEST(BoxFormats, CrowdAndDifficultFlagsAreKept) {
  const CocoDataset coco = parseCoco(
      cocoJson(kImage, R"({"image_id": 1, "category_id": 3, "bbox": [4, 2, 12, 8], "iscrowd": 1},
                          {"image_id": 1, "category_id": 7, "bbox": [4, 2, 12, 8], "iscrowd": 0})"),
      {}, false, "coco.json");
  ASSERT_EQ(coco.images[0].boxes.size(), 2u);
  EXPECT_TRUE(coco.images[0].boxes[0].crowd);
  EXPECT_FALSE(coco.images[0].boxes[1].crowd);
  EXPECT_FALSE(coco.images[0].boxes[0].difficult);
  EXPECT_CONTAINS(errorOf([] {
                    parseCoco(cocoJson(kImage, R"({"image_id": 1, "category_id": 3,
                                                   "bbox": [4, 2, 12, 8], "iscrowd": 2})"),
                              {}, false, "coco.json");
                  }),
                  "annotations[0].iscrowd: expected 0 or 1");

  const VocAnnotation voc =
      parseVoc(vocXml(vocObject("cat", 5, 3, 16, 10, "    <difficult>1</difficult>\n") +
                      vocObject("dog", 5, 3, 16, 10, "    <difficult>0</difficult>\n") +
                      vocObject("dog", 5, 3, 16, 10)),
               kCatDog, "a.xml");
  ASSERT_EQ(voc.boxes.size(), 3u);
  EXPECT_TRUE(voc.boxes[0].difficult);
  EXPECT_FALSE(voc.boxes[1].difficult);
  EXPECT_FALSE(voc.boxes[2].difficult);
  EXPECT_FALSE(voc.boxes[0].crowd);
  EXPECT_CONTAINS(errorOf([] {
                    parseVoc(
                        vocXml(vocObject("cat", 5, 3, 16, 10, "    <difficult>yes</difficult>\n")),
                        kCatDog, "a.xml");
                  }),
                  "a.xml line 6: <difficult> must be 0 or 1");
}

TEST(BoxFormats, ClassNamesFromBothYamlFormsAndANamesFile) {
  const std::vector<std::string> three{"cat", "dog house", "bird"};
  EXPECT_EQ(parseYoloNames("path: ../data  # root\ntrain: images/train\nval: images/val\n"
                           "nc: 3\nnames: [cat, 'dog house', \"bird\"]  # the classes\n",
                           true, "data.yaml"),
            three);
  // The flow form over several lines, with comments and a trailing comma.
  EXPECT_EQ(parseYoloNames("names: ['cat',\n        'dog house',  # two\n        bird,\n]\n", true,
                           "data.yaml"),
            three);
  // The block form, indices in any order, ended by the next top-level key.
  EXPECT_EQ(parseYoloNames("nc: 3\nnames:\n  2: bird\n  0: cat\n\n  # a comment\n"
                           "  1: 'dog house'\ntrain: images/train\n",
                           true, "data.yaml"),
            three);
  EXPECT_EQ(parseYoloNames("names: {0: cat, 2: bird, 1: dog house}\n", true, "data.yaml"), three);
  EXPECT_EQ(parseYoloNames("names:\n- cat\n- dog house\n- bird\nnc: 3\n", true, "data.yaml"),
            three);
  EXPECT_EQ(parseYoloNames("names: ['it''s', \"say \\\"hi\\\"\", it's]\n", true, "data.yaml"),
            (std::vector<std::string>{"it's", "say \"hi\"", "it's"}));
  // A names file: one per line, blank lines ignored, nothing read as YAML.
  EXPECT_EQ(parseYoloNames("cat\n\n  dog house \r\nbird\n", false, "classes.txt"), three);
  EXPECT_EQ(parseYoloNames("names: [a]\n", false, "classes.txt"),
            std::vector<std::string>{"names: [a]"});
}

TEST(BoxFormats, YamlNamesProblemsAreNamed) {
  EXPECT_CONTAINS(errorOf([] { parseYoloNames("nc: 2\ntrain: x\n", true, "data.yaml"); }),
                  "data.yaml: no top-level names key");
  EXPECT_CONTAINS(errorOf([] { parseYoloNames("data:\n  names: [a, b]\n", true, "data.yaml"); }),
                  "no top-level names key");
  EXPECT_CONTAINS(errorOf([] { parseYoloNames("names:\n  0: a\n  2: c\n", true, "data.yaml"); }),
                  "data.yaml: index 1 is missing from names");
  EXPECT_CONTAINS(errorOf([] { parseYoloNames("names:\n  0: a\n  0: b\n", true, "data.yaml"); }),
                  "data.yaml line 3: index 0 in names is given twice (also on line 2)");
  EXPECT_CONTAINS(errorOf([] { parseYoloNames("names:\n  0: a\n  one: b\n", true, "data.yaml"); }),
                  "data.yaml line 3: the index \"one\" in names is not a whole number");
  EXPECT_CONTAINS(errorOf([] { parseYoloNames("names:\n  0: a\n  -1: b\n", true, "data.yaml"); }),
                  "the index \"-1\"");
  EXPECT_CONTAINS(errorOf([] { parseYoloNames("names: [a, b\nnc: 2\n", true, "data.yaml"); }),
                  "data.yaml line 1: the names list is never closed");
  EXPECT_CONTAINS(errorOf([] { parseYoloNames("names: [a, , b]\n", true, "data.yaml"); }),
                  "an empty entry in names");
  EXPECT_CONTAINS(errorOf([] { parseYoloNames("names: 3\n", true, "data.yaml"); }),
                  "names must be a list");
  EXPECT_CONTAINS(
      errorOf([] { parseYoloNames("names:\n  0: a\nnames: [b]\n", true, "data.yaml"); }),
      "data.yaml line 3: a second names key");
  EXPECT_CONTAINS(errorOf([] { parseYoloNames("names: []\n", true, "data.yaml"); }),
                  "names lists no classes");
  EXPECT_CONTAINS(errorOf([] { parseYoloNames("\n \n", false, "classes.txt"); }),
                  "classes.txt: holds no class names");
}

TEST(BoxFormats, CocoClassesFollowTheCategoryIdsOrTheProjectsClasses) {
  // By id: cat (3) before dog (7), whatever their order in the file.
  EXPECT_EQ(parseCoco(kTwoBoxesCoco, {}, false, "coco.json").categories, kCatDog);
  // By the project's classes: dog is class 0 and cat class 1; a class without a category is
  // kept in its place.
  const std::vector<std::string> mine{"dog", "cat", "bird"};
  const CocoDataset coco = parseCoco(kTwoBoxesCoco, mine, false, "coco.json");
  EXPECT_EQ(coco.categories, mine);
  expectBoxes(coco.images[0].boxes, {{0, 4, 2, 16, 10}, {1, 20, 10, 40, 30}});

  const std::string missing = errorOf([] {
    parseCoco(kTwoBoxesCoco, {"dog", "bird"}, false, "coco.json");
  });
  EXPECT_CONTAINS(missing, "coco.json: categories[1].name: the category \"cat\"");
  EXPECT_CONTAINS(missing, "\"dog\", \"bird\"");
}

TEST(BoxFormats, CocoProblemsNameTheirJsonPathOrAreSkipped) {
  const auto error = [](const std::string& images, const std::string& annotations) {
    return errorOf([&] { parseCoco(cocoJson(images, annotations), {}, false, "coco.json"); });
  };
  const std::string good = R"({"image_id": 1, "category_id": 3, "bbox": [4, 2, 12, 8]})";
  EXPECT_CONTAINS(
      error(kImage, good + R"(, {"image_id": 1, "category_id": 3, "bbox": [4, 2, 12]})"),
      "coco.json: annotations[1].bbox: expected [x, y, width, height]");
  EXPECT_CONTAINS(error(kImage, R"({"image_id": "1", "category_id": 3, "bbox": [4, 2, 12, 8]})"),
                  "annotations[0].image_id: expected a whole number");
  EXPECT_CONTAINS(error(R"({"id": 1, "width": 40, "height": 30})", ""),
                  "coco.json: images[0].file_name: missing");
  EXPECT_CONTAINS(error(R"({"id": 1, "file_name": "../b.jpg", "width": 40, "height": 30})", ""),
                  "images[0].file_name: the file name \"../b.jpg\" climbs out");
  EXPECT_CONTAINS(
      error(R"({"id": 1, "file_name": "x/../../b.jpg", "width": 40, "height": 30})", ""),
      "climbs out");
  EXPECT_CONTAINS(error(R"({"id": 1, "file_name": "/etc/b.jpg", "width": 40, "height": 30})", ""),
                  "images[0].file_name: the file name \"/etc/b.jpg\" is an absolute path");
  EXPECT_CONTAINS(error(R"({"id": 1, "file_name": "a\u0000.jpg", "width": 40, "height": 30})", ""),
                  "holds a NUL");
  EXPECT_CONTAINS(error(kImage + "," + kImage, ""), "images[1].id: the id 1 is also images[0]'s");
  EXPECT_CONTAINS(error(R"({"id": 1, "file_name": "a.jpg", "width": 0, "height": 30})", ""),
                  "images[0].width: 0 is not a side");
  EXPECT_CONTAINS(errorOf([] { parseCoco("{\"images\": [", {}, false, "coco.json"); }),
                  "coco.json: JSON syntax error");
  EXPECT_CONTAINS(errorOf([] { parseCoco("[1, 2]", {}, false, "coco.json"); }),
                  "coco.json: not a COCO instances file");
  EXPECT_CONTAINS(
      errorOf([] { parseCoco(R"({"images": [], "categories": []})", {}, false, "coco.json"); }),
      "no \"annotations\" array");

  // Unknown images and categories: fatal, or skipped by annotation id under skip.
  const std::string bad =
      good + R"(, {"id": 41, "image_id": 9, "category_id": 3, "bbox": [4, 2, 12, 8]},
      {"id": 42, "image_id": 1, "category_id": 5, "bbox": [4, 2, 12, 8]},
      {"id": 43, "image_id": 1, "category_id": 3, "bbox": [50, 2, 12, 8]})";
  EXPECT_CONTAINS(error(kImage, bad),
                  "coco.json: annotations[1].image_id: image_id 9 names no image");
  const CocoDataset coco = parseCoco(cocoJson(kImage, bad), {}, true, "coco.json");
  ASSERT_EQ(coco.images[0].boxes.size(), 1u);
  ASSERT_EQ(coco.skipped.size(), 3u);
  EXPECT_EQ(coco.skipped[0].item, "coco.json annotation 41");
  EXPECT_CONTAINS(coco.skipped[0].reason, "image_id 9");
  EXPECT_EQ(coco.skipped[1].item, "coco.json annotation 42");
  EXPECT_CONTAINS(coco.skipped[1].reason, "category_id 5");
  EXPECT_EQ(coco.skipped[2].item, "coco.json annotation 43");
  EXPECT_CONTAINS(coco.skipped[2].reason, "outside the 40x30 image");
}

TEST(BoxFormats, VocReadsCommentsEntitiesAndCdataAndNoPartAsAnObject) {
  const std::string xml =
      "\xEF\xBB\xBF<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
      "<!-- written by hand: <object> here is no object -->\n"
      "<annotation verified=\"yes > no\">\n"
      "  <folder>VOC2012</folder>\n"
      "  <filename><![CDATA[a<1>&.jpg]]></filename>\n"
      "  <source><database>The VOC2007 Database</database></source>\n"
      "  <size>\n    <width>40</width>\n    <height>30</height>\n    <depth>3</depth>\n"
      "  </size>\n"
      "  <segmented>0</segmented>\n"
      "  <object>\n"
      "    <name>R&amp;D &lt;&#x41;&#66;&gt; &quot;&apos;</name>\n"
      "    <pose>Left</pose><truncated>1</truncated><!-- <name>cat</name> -->\n"
      "    <bndbox><xmin>5</xmin><ymin>3</ymin><xmax>16</xmax><ymax>10</ymax></bndbox>\n"
      "    <part>\n"
      "      <name>head</name>\n"
      "      <bndbox><xmin>6</xmin><ymin>4</ymin><xmax>8</xmax><ymax>6</ymax></bndbox>\n"
      "    </part>\n"
      "  </object>\n"
      "  <object><name>cat</name><bndbox><xmin>21</xmin><ymin>11</ymin>"
      "<xmax>40</xmax><ymax>30</ymax></bndbox></object>\n"
      "</annotation>\n";
  // Were the <part> read as an object, "head" would be refused as an unknown class.
  const VocAnnotation voc = parseVoc(xml, {"cat", "R&D <AB> \"'"}, "a.xml");
  EXPECT_EQ(voc.file, "a<1>&.jpg");
  EXPECT_EQ(voc.width, 40);
  EXPECT_EQ(voc.height, 30);
  expectBoxes(voc.boxes, {{1, 4, 2, 16, 10}, {0, 20, 10, 40, 30}});
}

TEST(BoxFormats, VocUnknownClassesAndBadEntitiesAreNamed) {
  const std::string unknown =
      errorOf([] { parseVoc(vocXml(vocObject("horse", 5, 3, 16, 10)), kCatDog, "a.xml"); });
  EXPECT_CONTAINS(unknown, "a.xml line 5: the object class \"horse\"");
  EXPECT_CONTAINS(unknown, "\"cat\", \"dog\"");
  std::vector<std::string> many;
  for (int i = 0; i < 12; ++i)
    many.push_back("c" + std::to_string(i));
  EXPECT_CONTAINS(
      errorOf([&] { parseVoc(vocXml(vocObject("horse", 5, 3, 16, 10)), many, "a.xml"); }),
      "\"c9\", and 2 more");

  EXPECT_CONTAINS(
      errorOf([] { parseVoc(vocXml(vocObject("c&t", 5, 3, 16, 10)), kCatDog, "a.xml"); }),
      "a.xml line 5: a '&' that starts no entity");
  EXPECT_CONTAINS(
      errorOf([] { parseVoc(vocXml(vocObject("&nbsp;cat", 5, 3, 16, 10)), kCatDog, "a.xml"); }),
      "the entity &nbsp; is not one of XML's five");
  EXPECT_CONTAINS(
      errorOf([] { parseVoc(vocXml(vocObject("&#0;", 5, 3, 16, 10)), kCatDog, "a.xml"); }),
      "the character reference &#0; names no character");
  EXPECT_CONTAINS(errorOf([] {
                    parseVoc("<annotation><filename>a.jpg</filename></annotation>", kCatDog,
                             "a.xml");
                  }),
                  "a.xml line 1: no <size>");
  EXPECT_CONTAINS(errorOf([] { parseVoc("<voc><size/></voc>", kCatDog, "a.xml"); }),
                  "the root element is <voc>, not <annotation>");
}

TEST(BoxFormats, VocRefusesDoctypeDeepNestingAndUnbalancedTags) {
  const std::string laughs =
      "<?xml version=\"1.0\"?>\n"
      "<!DOCTYPE lolz [<!ENTITY lol \"lol\"><!ENTITY lol2 \"&lol;&lol;&lol;\">]>\n"
      "<annotation><filename>&lol2;</filename></annotation>\n";
  const std::string doctype = errorOf([&] { parseVoc(laughs, kCatDog, "a.xml"); });
  EXPECT_CONTAINS(doctype, "a.xml line 2:");
  EXPECT_CONTAINS(doctype, "DOCTYPE and ENTITY declarations are refused");

  // <annotation> is level 1: 63 levels below it make 64, one more is refused.
  EXPECT_NO_THROW(parseVoc(nestedVoc(63), kCatDog, "a.xml"));
  EXPECT_CONTAINS(errorOf([] { parseVoc(nestedVoc(64), kCatDog, "a.xml"); }),
                  "a.xml line 2: elements nested deeper than 64 levels");
  EXPECT_CONTAINS(errorOf([] { parseVoc(nestedVoc(100000), kCatDog, "a.xml"); }),
                  "nested deeper than 64");

  EXPECT_CONTAINS(
      errorOf([] { parseVoc("<annotation>\n<size>\n</annotation>\n", kCatDog, "a.xml"); }),
      "a.xml line 3: unbalanced tags: </annotation> closes <size> opened on line 2");
  EXPECT_CONTAINS(errorOf([] { parseVoc("<annotation>\n<size></size>\n", kCatDog, "a.xml"); }),
                  "unbalanced tags: <annotation> opened on line 1 is never closed");
  EXPECT_CONTAINS(errorOf([] { parseVoc("<annotation></annotation>\n</size>", kCatDog, "a.xml"); }),
                  "a.xml line 2: unbalanced tags: </size> closes nothing");
  EXPECT_CONTAINS(
      errorOf([] { parseVoc("<annotation></annotation><annotation/>", kCatDog, "a.xml"); }),
      "a second root element");
  EXPECT_CONTAINS(errorOf([] { parseVoc("<annotation><!-- open", kCatDog, "a.xml"); }),
                  "a comment that is never closed");
  EXPECT_CONTAINS(errorOf([] { parseVoc("<annotation><size", kCatDog, "a.xml"); }),
                  "the tag <size> is not finished");
  EXPECT_CONTAINS(errorOf([] { parseVoc("text <annotation/>", kCatDog, "a.xml"); }),
                  "text outside the root element");
  EXPECT_CONTAINS(errorOf([] { parseVoc(std::string((16 << 20) + 1, ' '), kCatDog, "a.xml"); }),
                  "larger than 16 MiB");
}

// Files from elsewhere: each refusal is one line in Netsmith's words (no "[json.exception"),
// read as a stream whose memory is what is kept, not a document tree.
TEST(BoxFormats, CocoFilesFromElsewhereAreRefusedInPlainWords) {
  const auto error = [](const std::string& text) {
    return errorOf([&] { parseCoco(text, {}, false, "coco.json"); });
  };
  for (const std::string& text :
       {std::string(), std::string("{\"images\": [{\"id\": 1"), std::string("{\"x\": 1e400}"),
        std::string("{\"info\": \"\xff\xfe\"}"), std::string("{\"images\": [] , }")}) {
    const std::string e = error(text);
    EXPECT_CONTAINS(e, "coco.json");
    EXPECT_EQ(e.find("json.exception"), std::string::npos) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
  EXPECT_CONTAINS(error("{\"x\": 1e400}"), "a number too large for a double");
  EXPECT_CONTAINS(error("{\"info\": \"\xff\xfe\"}"), "JSON syntax error");
  // Deep nesting anywhere (a skipped member too) is refused by depth, not by the stack.
  EXPECT_CONTAINS(error("{\"info\": " + std::string(5000, '[') + std::string(5000, ']') + "}"),
                  "nested deeper than 128 levels");
  // The kept arrays must be arrays, given once; elements must be objects.
  EXPECT_CONTAINS(error(R"({"images": {}, "annotations": [], "categories": []})"),
                  "images: expected an array, found an object");
  EXPECT_CONTAINS(error(R"({"images": 3, "annotations": [], "categories": []})"),
                  "images: expected an array, found a single value");
  EXPECT_CONTAINS(error(R"({"images": [], "images": [], "annotations": [], "categories": []})"),
                  "\"images\" is given twice");
  EXPECT_CONTAINS(error(R"({"images": [], "annotations": [[]], "categories": []})"),
                  "annotations[0]: expected an object, found a array");
  EXPECT_CONTAINS(error(R"({"images": [7], "annotations": [], "categories": []})"),
                  "images[0]: expected an object");
  // Two images naming one file: the boxes of both would land on one picture.
  EXPECT_CONTAINS(error(cocoJson(kImage + R"(, {"id": 2, "file_name": "a.jpg", "width": 40,
                                              "height": 30})",
                                 "")),
                  "images[1].file_name: the file \"a.jpg\" is also images[0]'s");
  // A control character in a file name never reaches a message raw.
  const std::string e = error(cocoJson(
      R"({"id": 1, "file_name": "a\nINJECTED line\u001b[2J.jpg", "width": 40, "height": 30})", ""));
  EXPECT_CONTAINS(e, "holds a control character");
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  EXPECT_EQ(e.find('\x1b'), std::string::npos) << e;
  // Other members and segmentation polygons are skipped unread, whatever they hold.
  const CocoDataset coco = parseCoco(
      R"({"licenses": [{"a": [1, [2, {"b": null}]]}], "info": "x", "images": [)" + kImage +
          R"(], "annotations": [{"image_id": 1, "category_id": 3, "bbox": [4, 2, 12, 8],
              "segmentation": {"counts": [1, 2, 3], "size": [30, 40]}}],
              "categories": [{"id": 3, "name": "cat", "supercategory": "animal"}]})",
      {}, false, "coco.json");
  ASSERT_EQ(coco.images.size(), 1u);
  ASSERT_EQ(coco.images[0].boxes.size(), 1u);
  EXPECT_EQ(coco.categoryIds, std::vector<std::int64_t>{3});
  // The file's category ids in class order (sorted by id, or the project's classes).
  EXPECT_EQ(parseCoco(kTwoBoxesCoco, {}, false, "c").categoryIds,
            (std::vector<std::int64_t>{3, 7}));
  EXPECT_EQ(parseCoco(kTwoBoxesCoco, {"dog", "cat", "bird"}, false, "c").categoryIds,
            (std::vector<std::int64_t>{7, 3, -1}));
}
